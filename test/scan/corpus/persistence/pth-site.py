import os
import site

def stay():
    target = os.path.join(site.getsitepackages()[0], "zz_helper.pth")
    with open(target, "w") as f:  # expect: persistence
        f.write("import helper\n")
