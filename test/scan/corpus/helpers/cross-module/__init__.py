from .util import run_script
