import requests

def latest(version=requests.get("https://example.invalid/v").text):  # expect: network-at-import
    return version
