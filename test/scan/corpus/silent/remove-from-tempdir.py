import os
import shutil
import tempfile

def work():
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.png")
    os.remove(out)
    shutil.rmtree(tmp)
