"""Packing helper of record.sh: reports go into $OUT as soon as they exist, a few tars of at most ~15 MB.

    python3 record_pack.py add REPORT.ncu-rep OUT     # append one report to OUT/reports_<i>.tar
    python3 record_pack.py finish WORKDIR OUT         # timings.json, checks.json and logs/ into OUT/misc.tar.gz
"""
import json
import os
import sys
import tarfile

LIMIT = 15_000_000


def add(report: str, out: str) -> None:
    i = 0
    while os.path.exists(f"{out}/reports_{i}.tar") and os.path.getsize(f"{out}/reports_{i}.tar") + os.path.getsize(report) > LIMIT:
        i += 1
    with tarfile.open(f"{out}/reports_{i}.tar", "a") as t:
        t.add(report, arcname=os.path.basename(report))


def finish(work: str, out: str) -> None:
    checks = json.load(open(f"{work}/checks.json")) if os.path.exists(f"{work}/checks.json") else {}
    with open(f"{work}/timings.json", "w") as f:
        json.dump({k: round(v["median_us"], 2) for k, v in sorted(checks.items()) if "median_us" in v}, f, indent=1)
    with tarfile.open(f"{out}/misc.tar.gz", "w:gz") as t:
        for name in ("logs", "checks.json", "timings.json"):
            if os.path.exists(f"{work}/{name}"):
                t.add(f"{work}/{name}", arcname=name)


if __name__ == "__main__":
    {"add": add, "finish": finish}[sys.argv[1]](sys.argv[2], sys.argv[3])
