"""Maps as bpftrace prints them (and tracepp script, which prints them the same way),
parsed into {name: {key: value or [(bucket label, count)]}} and the order values came in.
Shared by t-script.sh and t-script-live.sh."""
import re
def parse(text):
    maps, order, cur = {}, {}, None
    for line in text.split("\n"):
        m = re.match(r"^(@\w*)(?:\[(.*)\])?: (.*)$", line)
        if m:
            name, key, val = m.group(1), m.group(2) or "", m.group(3)
            maps.setdefault(name, {})
            order.setdefault(name, [])
            if val == "":
                maps[name][key] = []
                cur = maps[name][key]
            else:
                maps[name][key] = val
                order[name].append(val)
                cur = None
        elif cur is not None and line.strip():
            lab, rest = line[:16].strip(), line[16:]
            cur.append((lab, int(rest.split("|")[0])))
        else:
            cur = None
    return maps, order
