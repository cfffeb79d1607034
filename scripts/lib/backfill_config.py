"""The backfill's copy of a pipeline config (scripts/backfill.sh step 1), printed to stdout.

Line-based on purpose: the copy keeps the file's layout and comments, so a reviewer can diff it
with the live config. In each [sources.*] table of a file or Kafka source, START and RATE are set;
in each [sinks.*] postgres table, `table` gets SUFFIX and `create_table = true`; output and state
paths move under OUT; the [api] table is replaced by one on PORT.
"""
import re
import sys

cfg, start, rate, out, port = sys.argv[1:6]
suffix = __import__("os").environ.get("SUFFIX", "_v2")
lines = open(cfg).read().splitlines()
section, kind, result, skipping = None, None, [], False
pending = []  # lines to add at the end of the current section


def close_section():
    result.extend(pending)
    pending.clear()


for line in lines:
    head = re.match(r"^\[([^\]]+)\]\s*$", line)
    if head:
        close_section()
        section, kind = head.group(1), None
        skipping = section == "api"
        if skipping:
            continue
        result.append(line)
        continue
    if skipping:
        continue
    m = re.match(r'^type\s*=\s*"([^"]+)"', line)
    if m:
        kind = m.group(1)
        if section.startswith("sources.") and kind in ("file", "kafka"):
            pending.append(f'rate_limit = "{rate}/s"')
            pending.append(f'start_time = "{start}"' if kind == "file" else f'start = {{ timestamp = "{start}" }}')
        if section.startswith("sinks.") and kind == "postgres":
            pending.append("create_table = true")
    if section and section.startswith("sources.") and re.match(r"^(rate_limit|start_time|start|start_offset)\s*=", line):
        continue  # replaced above
    if section and section.startswith("sinks.") and kind == "postgres":
        if re.match(r"^create_table\s*=", line):
            continue
        line = re.sub(r'^table\s*=\s*"([^"]+)"', lambda t: f'table = "{t.group(1)}{suffix}"', line)
    line = re.sub(r'^(path|dir)\s*=\s*"(?:[^"]*/)?([^"/]+)"', lambda p: f'{p.group(1)} = "{out}/{p.group(2)}"', line) \
        if section and (section.startswith("sinks.") or section in ("checkpoint", "dead_letter")) else line
    result.append(line)
close_section()
if not any(re.match(r'^rate_limit = ', l) for l in result):
    sys.exit(f"backfill: no file or Kafka source found in {cfg}")
print("\n".join(result))
print(f'\n[api]\naddress = "127.0.0.1:{port}"')
