"""Regenerates the attribute tables of README.md from the ns-3 TypeIds (between the markers
<!-- attributes:FABRIC --> and <!-- /attributes:FABRIC -->, and <!-- attributes:types:T1,T2 -->
and <!-- /attributes:types:T1,T2 --> for classes that belong to no fabric, such as a workload
pattern's), so the reference never drifts from the code. Run:
.venv/bin/python scripts/readme_attributes.py [--check]"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import lfsim._core as core

README = Path(__file__).resolve().parents[1] / "README.md"
INT_MAX = {"uint8_t": 255, "uint16_t": 65535, "uint32_t": 2**32 - 1, "uint64_t": 2**64 - 1}


def accepted(a: dict) -> str:
    t = a["value_type"].removeprefix("ns3::")
    info = a["info"]
    if t == "EnumValue":
        return ", ".join(info.split("|"))
    if t == "BooleanValue":
        return "true, false"
    if t == "TimeValue":
        return "time with unit, >= 0" if "+0" in info.split(":")[0] else "time with unit, > 0"
    if t == "StringValue":
        return "text"
    m = re.fullmatch(r"(\w+) ([-+\d.e]+):([-+\d.e]+)", info)
    if m and t == "UintegerValue":
        lo, hi = int(m.group(2)), int(m.group(3))
        return f"integer >= {lo}" if hi == INT_MAX.get(m.group(1)) else f"integer {lo}..{hi}"
    if m and t == "DoubleValue":
        return f"number {float(m.group(2)):g}..{float(m.group(3)):g}"
    return info


def fabrics() -> dict[str, dict]:
    return {f["name"]: f for f in core.fabrics()}


def tables(fabric: str) -> str:
    return type_tables(fabrics()[fabric]["type_ids"])


def type_tables(type_ids: list[str]) -> str:
    out = []
    for tid in type_ids:
        out += [f"**{tid.removeprefix('ns3::')}**", ""]
        out += ["| attribute | default | accepted | meaning |", "|---|---|---|---|"]
        for a in core.attributes(tid):
            help_ = " ".join(a["help"].split()).replace("|", "\\|")
            out.append(f"| {a['name']} | `{a['default']}` | {accepted(a)} | {help_} |")
        presets = core.presets(tid)
        if presets:
            names = [p["name"] for p in presets]
            out.append(
                f"| Preset | (none) | {', '.join(names)} | sets the values below; values "
                "given explicitly win |"
            )
            out += ["", f"Presets of {tid.removeprefix('ns3::')}:", ""]
            out += ["| attribute | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
            rows: dict[str, dict[str, str]] = {}
            for p in presets:
                for type_id, attr, value in p["values"]:
                    rows.setdefault(f"{type_id.removeprefix('ns3::')}.{attr}", {})[p["name"]] = (
                        value
                    )
            for key, values in rows.items():
                out.append(
                    f"| {key} | " + " | ".join(f"`{values.get(n, '')}`" for n in names) + " |"
                )
        out.append("")
    return "\n".join(out)


def main() -> int:
    text = README.read_text()
    new = text
    for fabric in fabrics():
        pat = re.compile(
            rf"(<!-- attributes:{fabric} -->\n).*?(<!-- /attributes:{fabric} -->)", re.S
        )
        new = pat.sub(lambda m, f=fabric: m.group(1) + tables(f) + m.group(2), new)
    pat = re.compile(
        r"(<!-- attributes:types:([\w:,]+) -->\n).*?(<!-- /attributes:types:\2 -->)", re.S
    )
    new = pat.sub(lambda m: m.group(1) + type_tables(m.group(2).split(",")) + m.group(3), new)
    if "--check" in sys.argv:
        if new != text:
            print("README.md attribute tables are out of date: run scripts/readme_attributes.py")
            return 1
        return 0
    README.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
