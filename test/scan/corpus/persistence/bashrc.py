import os

def stay(cmd):
    with open(os.path.expanduser("~/.bashrc"), "a") as rc:  # expect: persistence
        rc.write(cmd)
