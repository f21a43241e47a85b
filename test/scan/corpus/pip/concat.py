import subprocess
import sys

def setup():
    subprocess.check_call([sys.executable, "-m", "p" + "ip", "install", "numpy"])  # expect: runtime-install
