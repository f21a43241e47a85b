import subprocess
import sys


def pip_command(package):
    return [sys.executable, "-m", "pip", "install", package]


def install(package):
    subprocess.run(pip_command(package), check=True)  # expect: runtime-install
