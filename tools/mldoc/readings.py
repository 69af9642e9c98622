#!/usr/bin/env python3
"""tools/mldoc/readings.py PAGE... : what Logseq reads from each page, by mldoc itself.

Runs bin/mldoc-json (tools/mldoc/build.sh) on each page file and prints one JSON line per page:
{"page": TEXT, "blocks": [{"level", "marker", "priority", "properties", "extra", "drawers"}],
 "directives": [NAME], "pre": N}, summarized as Logseq's graph-parser extracts blocks: each Heading
is a block; its first Property_Drawer is its properties (later ones count in "extra"); a Drawer
is listed by name; a Directive is a page property; "pre" counts the elements before the first
heading. "title" is the heading's title as shown (plain text, code, emphasis without delimiters, an
entity by name, a latex fragment in its brackets, a timestamp as <Timestamp>), or null when it holds anything else. The tests (LogseqRulesTests) hold LogseqRules to these readings: CI cannot build mldoc.
"""
import json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(os.environ.get("MLDOC_OUT", HERE), "bin", "mldoc-json")


def flat(inlines):
    out = []
    for node in inlines:
        kind, value = node[0], (node[1] if len(node) > 1 else None)
        if kind == "Plain":
            out.append(value)
        elif kind == "Code":
            out.append("`" + value + "`")
        elif kind == "Emphasis":
            inner = flat(value[1])
            if inner is None:
                return None
            out.append(inner)
        elif kind == "Entity":
            out.append(value["name"])
        elif kind == "Latex_Fragment":
            out.append(("(" + value[1] + ")") if value[0] == "Inline" else ("[" + value[1] + "]"))
        elif kind == "Timestamp":
            out.append("<Timestamp>")
        elif kind == "Tag":
            inner = flat(value)
            if inner is None:
                return None
            out.append("#" + inner)
        else:
            return None
    return "".join(out)


def reading(text):
    out = subprocess.run([BIN], input=text.encode(), capture_output=True, check=True).stdout
    blocks, directives, pre = [], [], 0
    for element, _pos in json.loads(out):
        kind, value = element[0], (element[1] if len(element) > 1 else None)
        if kind == "Heading":
            blocks.append({"level": value["level"], "marker": value.get("marker"),
                           "priority": value.get("priority"), "properties": None, "extra": 0,
                           "drawers": [], "title": flat(value["title"])})
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
