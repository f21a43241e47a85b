import subprocess as sp
import sys

run = sp.check_call

def install():
    run([sys.executable, "-m", "pip", "install", "numpy"])  # expect: runtime-install
