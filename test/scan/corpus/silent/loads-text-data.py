import json
import os

def load():
    with open(os.path.join(os.path.dirname(__file__), "data.txt")) as f:
        return json.loads(f.read())
