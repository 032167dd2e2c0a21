#!/usr/bin/env python3
"""An independent implementation of the bundle digest ("fwlab-digest-1",
documented on bundle.Digest), from a bundle's JSON: prints the digest.
It made testdata/digest-small.sha256: python3 digest.py digest-small.json"""
import hashlib, json, math, struct, sys

def f64(v):
    if isinstance(v, str):
        v = {"NaN": math.nan, "Inf": math.inf, "-Inf": -math.inf}[v]
    if v != v:
        return struct.pack("<Q", 0x7FF8000000000000)
    return struct.pack("<d", float(v))

def i64(v):
    return struct.pack("<q", v)

def s(v):
    b = v.encode("utf-8")
    return i64(len(b)) + b

def opt(v):
    return b"\x00" if v is None else b"\x01" + f64(v)

def H(b):
    return hashlib.sha256(b).digest()

def record(r):
    out = [i64(r["k"]), f64(r["passes"]), f64(r["time_s"]), s(r["step"]), f64(r["gamma"])]
    for k in ("batch", "active", "fw_steps", "away_steps", "drops", "cleanups"):
        out.append(i64(r.get(k, 0)))
    for k in ("objective", "gap", "grad_err"):
        out.append(opt(r.get(k)))
    extra = r.get("extra") or {}
    out.append(i64(len(extra)))
    for k in sorted(extra, key=lambda k: k.encode("utf-8")):
        out += [s(k), f64(extra[k])]
    return b"".join(out)

def digest(doc):
    out = [b"fwlab-digest-1\n", i64(len(doc["traces"]))]
    for t in doc["traces"]:
        out += [s(t["algo"]), i64(t["replication"]), i64(t["seed"])]
        sm = t.get("summary")
        if sm is None:
            out.append(b"\x00")
        else:
            out += [b"\x01", f64(sm["objective"]), f64(sm["gap"]), i64(sm["iters"]), f64(sm["passes"]),
                    f64(sm["time_s"]), s(sm["status"]), s(sm.get("message", ""))]
        st = t.get("status", "")
        if st and (sm is None or st != sm["status"]):
            out += [b"\x02", s(st)]
        recs = t["records"]
        out += [i64(len(recs)), H(b"".join(record(r) for r in recs))]
    return "sha256:" + H(b"".join(out)).hex()

# "-0" is a JSON integer to Python; keep its sign as a float
doc = json.load(open(sys.argv[1], encoding="utf-8"), parse_int=lambda x: -0.0 if x == "-0" else int(x))
print(digest(doc))
