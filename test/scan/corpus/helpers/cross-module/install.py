import sys
from .util import run_script

run_script([sys.executable, "-m", "pip", "install", "numpy"])  # expect: runtime-install
