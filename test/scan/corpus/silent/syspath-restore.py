import os
import sys

def load(name):
    here = os.path.dirname(__file__)
    sys.path.insert(0, here)  # expect: environment-manipulation
    try:
        return __import__(name)
    finally:
        sys.path.remove(here)
