#!/usr/bin/env python3
"""tools/mldoc/readings.py PAGE... : what Logseq reads from each page, by mldoc itself.

Runs bin/mldoc-json (tools/mldoc/build.sh) on each page file and prints one JSON line per page:
{"page": TEXT, "blocks": [{"level", "marker", "priority", "properties", "extra", "drawers"}],
 "directives": [NAME], "pre": N}, summarized as Logseq's graph-parser extracts blocks: each Heading
is a block; its first Property_Drawer is its properties (later ones count in "extra"); a Drawer
is listed by name; a Directive is a page property; "pre" counts the elements before the first
heading. The tests (LogseqRulesTests) hold LogseqRules to these readings: CI cannot build mldoc.
"""
import json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(os.environ.get("MLDOC_OUT", HERE), "bin", "mldoc-json")


def reading(text):
    out = subprocess.run([BIN], input=text.encode(), capture_output=True, check=True).stdout
    blocks, directives, pre = [], [], 0
    for element, _pos in json.loads(out):
        kind, value = element[0], (element[1] if len(element) > 1 else None)
        if kind == "Heading":
            blocks.append({"level": value["level"], "marker": value.get("marker"),
                           "priority": value.get("priority"), "properties": None, "extra": 0,
                           "drawers": []})
        elif kind == "Directive":
            directives.append(value[0] if isinstance(value, list) else value)
        elif not blocks:
            pre += 1
        elif kind == "Property_Drawer":
            b = blocks[-1]
            if b["properties"] is None:
                b["properties"] = [[k, v] for k, v, *_ in value]
            else:
                b["extra"] += 1
        elif kind == "Drawer":
            blocks[-1]["drawers"].append(value)
    for b in blocks:
        b["properties"] = b["properties"] or []
    return {"page": text, "blocks": blocks, "directives": directives, "pre": pre}


def main():
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            print(json.dumps(reading(f.read()), ensure_ascii=False, sort_keys=True))


if __name__ == "__main__":
    main()
