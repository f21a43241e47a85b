import os
from importlib.machinery import SourceFileLoader

HERE = os.path.dirname(__file__)
payload = SourceFileLoader("payload", os.path.join(HERE, "payload.txt")).load_module()  # expect: code-in-data
