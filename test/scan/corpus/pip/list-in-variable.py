import subprocess
import sys

def setup():
    args = [sys.executable, "-m"]
    args += ["pip", "install"]
    args.append("numpy")
    subprocess.check_call(args)  # expect: runtime-install
