import os

def read_config():
    # append to ~/.bashrc yourself if you want the alias
    hint = "echo 'alias x=y' >> ~/.bashrc"
    with open(os.path.join(os.path.dirname(__file__), "settings.pth.txt")) as f:
        return f.read(), hint
