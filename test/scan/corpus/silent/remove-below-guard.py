import os
from pathlib import Path

ROOT = os.path.dirname(__file__)

def delete(file):
    if os.path.commonpath([ROOT, os.path.abspath(file)]) != ROOT:
        raise ValueError(file)
    os.remove(file)

def delete_path(path: Path, base: Path):
    if not path.resolve().is_relative_to(base):
        return
    os.unlink(path)
