import os
import zipimport

vendor = zipimport.zipimporter(os.path.join(os.path.dirname(__file__), "vendor.zip"))
tools = vendor.load_module("tools")

NODE_CLASS_MAPPINGS = {}
