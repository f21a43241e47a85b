import subprocess
import sys


def run_script(cmd, cwd="."):
    return subprocess.check_call(cmd, cwd=cwd)


def install():
    run_script([sys.executable, "-m", "pip", "install", "-U", "numpy"])  # expect: runtime-install
