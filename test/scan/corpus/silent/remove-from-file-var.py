import os

def clean():
    here = os.path.dirname(os.path.abspath(__file__))
    p = os.path.join(here, "cache.bin")
    os.remove(p)
