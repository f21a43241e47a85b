import importlib

def load(name, cls):
    return getattr(importlib.import_module(name), cls)
