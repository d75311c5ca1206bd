#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The daemon's documents against the daemon itself, so that they cannot drift:
- nnd(8) (deploy/man/nnd.8.scd) names exactly the options `nnd --help` lists, and says
  the same default for each option whose help gives one as a value;
- the shipped /etc/nnd/nnd.conf (deploy/nnd.conf) is what `nnd --print-config-template`
  prints from the daemon's own table of keys;
- nnd.conf(5) names every key of that table with the template's default (the quotas in
  its table, per app and per connection).
Usage: man_check.py BUILD_DIR SOURCE_DIR; exit status 1 with every difference named."""
import re
import subprocess
import sys

build, src = sys.argv[1], sys.argv[2]
errors = []


def run(*args):
    p = subprocess.run([f"{build}/nnd", *args], capture_output=True, text=True)
    if p.returncode != 0:
        errors.append(f"nnd {' '.join(args)}: exit status {p.returncode}")
    return p.stdout


def plain(text):
    """scdoc markup away: emphasis, escapes."""
    return re.sub(r"[*_]", "", text.replace("\\_", "\0")).replace("\0", "_").replace("\\", "")


def help_options(text):
    """{option: default or None} from --help: each option's lines joined."""
    blocks, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"\s+(?:-\w, )?(--[a-z-]+)", line)
        if m:
            cur = m.group(1)
            blocks[cur] = line
        elif cur and line.startswith("      "):
            blocks[cur] += " " + line.strip()
        else:
            cur = None
    out = {}
    for opt, b in blocks.items():
        m = re.search(r"(\w+) \(default\)", b) or re.search(r"\(default ([^\s;:,)]+)", b)
        out[opt] = m.group(1) if m and not m.group(1).startswith(("/", "$")) else None
    return out


def man_blocks(scd):
    """{option: its paragraph} from the OPTIONS section of an scdoc page."""
    blocks, cur = {}, None
    for line in scd.splitlines():
        m = re.match(r"\*(?:-\w\*, \*)?(--[a-z-]+)\*", line)
        if m:
            cur = m.group(1)
            blocks[cur] = ""
        elif cur is not None and (line.startswith("#") or line.startswith("*")):
            cur = None
        elif cur is not None:
            blocks[cur] += " " + line.strip()
    return blocks


helped = help_options(run("--help"))
if "--help" not in helped or "--version" not in helped:
    errors.append("--help lists no --help or --version")
page = open(f"{src}/deploy/man/nnd.8.scd").read()
manned = man_blocks(page)
for opt in sorted(set(helped) - set(manned)):
    errors.append(f"nnd.8: {opt} is in --help but not in the man page")
for opt in sorted(set(manned) - set(helped)):
    errors.append(f"nnd.8: {opt} is in the man page but not in --help")
for opt, dflt in sorted(helped.items()):
    if dflt and opt in manned:
        text = plain(manned[opt])
        if not re.search(rf"(?i)\b(?:{re.escape(dflt)} \(default\)|default:? {re.escape(dflt)}\b)", text):
            errors.append(f"nnd.8: {opt}: --help says default {dflt}, the page: {text.strip()}")
for short in ("-h", "-V"):
    if f"*{short}*" not in page:
        errors.append(f"nnd.8: no {short}")

template = run("--print-config-template")
shipped = open(f"{src}/deploy/nnd.conf").read()
if template != shipped:
    errors.append("deploy/nnd.conf differs from `nnd --print-config-template` "
                  "(regenerate it: build/nnd --print-config-template > deploy/nnd.conf)")

conf = plain(open(f"{src}/deploy/man/nnd.conf.5.scd").read())
rows = {}  # quota table: name -> [per app, per connection]
for m in re.finditer(r"\|\s+(\w+)\n:\s+(\S+)\n:\s+(\S+)", conf):
    rows[m.group(1)] = [m.group(2), m.group(3)]
for m in re.finditer(r"^#(\S+) = (.*)$", template, re.M):
    key, value = m.group(1), m.group(2)
    q = re.match(r"quota\.(app|connection)\.(\w+)", key)
    if q:
        have = rows.get(q.group(2), [None, None])[q.group(1) == "connection"]
        if have != value:
            errors.append(f"nnd.conf.5: {key}: the daemon's default is {value}, the table says {have}")
        continue
    block = re.search(rf"^{re.escape(key)} = (.*?)(?=^\S|\Z)", conf, re.M | re.S)
    if not block:
        errors.append(f"nnd.conf.5: no key {key}")
    elif not value.isupper() and not value.startswith("/") and \
            not re.search(rf"(?i)\b(?:default:? {re.escape(value)}\b)", block.group(1)):
        errors.append(f"nnd.conf.5: {key}: the daemon's default is {value}, the page: "
                      f"{' '.join(block.group(1).split())}")

for e in errors:
    print("man_check:", e)
print("man_check:", "FAILED" if errors else f"passed ({len(helped)} options, "
      f"{template.count(chr(10) + '#') - template.count(chr(10) + '# ')} keys)")
sys.exit(1 if errors else 0)
