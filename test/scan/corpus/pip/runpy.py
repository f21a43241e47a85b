import runpy
import sys

def setup():
    sys.argv = ["pip", "install", "numpy"]
    runpy.run_module("pip", run_name="__main__")  # expect: runtime-install
