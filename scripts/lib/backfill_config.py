"""The backfill's copy of a pipeline config (scripts/backfill.sh step 1), printed to stdout.

Line-based, so the copy keeps the file's layout and comments and a reviewer can diff it with the
live config; the kinds of sources and sinks come from parsing the file first (key order within a
table does not matter), and the result is parsed again and checked before it is printed: a copy
that could write a live output is refused. In each file or Kafka source, START and RATE are set
(and a Kafka source reads with its own consumer group); each postgres sink's `table` gets SUFFIX
and `create_table = true`; file output, dead-letter and state paths move under OUT; the [api] table
is replaced by one on PORT. Kafka sinks are refused: the backfill would write the live topic.
"""
import os
import re
import sys
import tomllib

cfg_path, start, rate, out, port = sys.argv[1:6]
suffix = os.environ.get("SUFFIX", "_v2")
text = open(cfg_path).read()
try:
    live = tomllib.loads(text)
except tomllib.TOMLDecodeError as e:
    sys.exit(f"backfill: {cfg_path} is not TOML: {e}")
kinds = {f"{group}.{name}": t.get("type") for group in ("sources", "sinks")
         for name, t in live.get(group, {}).items()}
for name, s in live.get("sinks", {}).items():
    if s.get("type") == "kafka":
        sys.exit(f"backfill: sink `{name}` writes the live Kafka topic `{s.get('topic')}`; "
                 "backfill a copy of the config that writes its own topic")

result, section, skipping, pending = [], None, False, []
for line in text.splitlines():
    head = re.match(r"^\s*\[([^\]]+)\]\s*$", line)
    if head:
        section = head.group(1).strip()
        skipping = section == "api"
        kind = kinds.get(section)
        if section.startswith("sources.") and kind in ("file", "kafka"):
            pending.append(f'rate_limit = "{rate}/s"')
            if kind == "file":
                pending.append(f'start_time = "{start}"')
            else:
                pending.append(f'start = {{ timestamp = "{start}" }}')
                group = live["sources"][section.split(".", 1)[1]].get("group_id") or f"sluice-{section.split('.', 1)[1]}"
                pending.append(f'group_id = "{group}-backfill"')
        if section.startswith("sinks.") and kind == "postgres":
            pending.append("create_table = true")
        if not skipping:
            result.append(line)
            result.extend(pending)
        pending.clear()
        continue
    if skipping:
        continue
    kind = kinds.get(section or "")
    key = re.match(r"^\s*([A-Za-z0-9_]+)\s*=", line)
    key = key.group(1) if key else None
    if section and section.startswith("sources.") and kind in ("file", "kafka") and \
            key in ("rate_limit", "start_time", "start", "start_offset", "group_id"):
        continue  # set above
    if section and section.startswith("sinks.") and kind == "postgres":
        if key == "create_table":
            continue
        line = re.sub(r'^(\s*table\s*=\s*)(["\'])([^"\']+)\2', lambda t: f'{t.group(1)}"{t.group(3)}{suffix}"', line)
    if section and (section.startswith("sinks.") or section in ("checkpoint", "dead_letter")) and key in ("path", "dir"):
        line = re.sub(r'^(\s*(?:path|dir)\s*=\s*)(["\'])(?:[^"\']*/)?([^"\'/]+)/?\2',
                      lambda p: f'{p.group(1)}"{out}/{p.group(3)}"', line)
    result.append(line)
copy = "\n".join(result) + f'\n\n[api]\naddress = "127.0.0.1:{port}"\n'

# The copy must not touch anything live.
new = tomllib.loads(copy)
problems = []
for name, s in new.get("sinks", {}).items():
    old = live["sinks"][name]
    if s.get("type") == "postgres" and (s.get("table") == old.get("table") or not str(s.get("table")).endswith(suffix)):
        problems.append(f"sink `{name}` would still write table `{s.get('table')}`")
    for k in ("path",):
        if k in s and s[k] == old.get(k):
            problems.append(f"sink `{name}` would still write `{s[k]}`")
if "checkpoint" in new and new["checkpoint"].get("dir") == live.get("checkpoint", {}).get("dir"):
    problems.append("the checkpoints would go to the live job's folder")
if not any(s.get("rate_limit") for s in new.get("sources", {}).values()):
    problems.append("no file or Kafka source to replay")
if problems:
    sys.exit("backfill: refusing a copy of " + cfg_path + ": " + "; ".join(problems) +
             " (write the key as `key = \"value\"` in its own [table])")
print(copy)
