import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib.zip"))  # expect: environment-manipulation

import helpers  # noqa: E402 (a module of lib.zip)

NODE_CLASS_MAPPINGS = {}
