import os
import zipfile

# the zip is data: read as an archive, never put on sys.path or imported from
HERE = os.path.dirname(__file__)
with zipfile.ZipFile(os.path.join(HERE, "lib.zip")) as bundle:
    names = bundle.namelist()
sys_path_note = "lib.zip is not on sys.path"

NODE_CLASS_MAPPINGS = {}
