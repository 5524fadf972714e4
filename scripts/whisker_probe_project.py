#!/usr/bin/env python3
"""Writes suites/tests/data/WhiskerProbe.sb3: a small project of our own that exercises what
Whisker's test driver reads and the example suites do not (issue 32): bubbles after the green
flag and on clones, the question bubble, random inputs of every device (keys, mouse position,
clicks, typed answers), timed think. Deterministic bytes (fixed zip timestamps).

    scripts/whisker_probe_project.py [OUT.sb3]
"""
import hashlib
import json
import os
import sys
import zipfile

SPRITE_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" viewBox="0 0 40 40">'
              '<rect x="0" y="0" width="40" height="40" fill="#3366cc"/></svg>')
BACKDROP_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="480" height="360" viewBox="0 0 480 360">'
                '<rect x="0" y="0" width="480" height="360" fill="#ffffff"/></svg>')


def costume(svg, name, cx, cy):
    md5 = hashlib.md5(svg.encode()).hexdigest()
    return {"assetId": md5, "name": name, "md5ext": md5 + ".svg", "dataFormat": "svg",
            "bitmapResolution": 1, "rotationCenterX": cx, "rotationCenterY": cy}


def blk(opcode, nxt=None, parent=None, inputs=None, fields=None, top=False, shadow=False):
    b = {"opcode": opcode, "next": nxt, "parent": parent, "inputs": inputs or {}, "fields": fields or {},
         "shadow": shadow, "topLevel": top}
    if top:
        b["x"], b["y"] = 0, 0
    return b


def var(name):
    return [name, "var-" + name]


def num(v):
    return [1, [4, str(v)]]


def text(v):
    return [1, [10, str(v)]]


def cat_blocks():
    b = {}
    # when flag clicked: reset the counters, make a clone, ask, keep the answer
    b["f1"] = blk("event_whenflagclicked", "s1", top=True)
    b["s1"] = blk("data_setvariableto", "s2", "f1", {"VALUE": text(0)}, {"VARIABLE": var("space")})
    b["s2"] = blk("data_setvariableto", "s3", "s1", {"VALUE": text(0)}, {"VARIABLE": var("a")})
    b["s3"] = blk("data_setvariableto", "cl", "s2", {"VALUE": text(0)}, {"VARIABLE": var("clicks")})
    b["cl"] = blk("control_create_clone_of", "ask", "s3", {"CLONE_OPTION": [1, "clm"]})
    b["clm"] = blk("control_create_clone_of_menu", parent="cl", fields={"CLONE_OPTION": ["_myself_", None]},
                   shadow=True)
    b["ask"] = blk("sensing_askandwait", "sa", "cl", {"QUESTION": text("name?")})
    b["sa"] = blk("data_setvariableto", None, "ask", {"VALUE": [3, "ans", [10, ""]]}, {"VARIABLE": var("answer")})
    b["ans"] = blk("sensing_answer", parent="sa")
    # when flag clicked: forever { if key right arrow pressed: change x by 2 }; mouse x kept
    b["f2"] = blk("event_whenflagclicked", "fe", top=True)
    b["fe"] = blk("control_forever", None, "f2", {"SUBSTACK": [2, "if"]})
    b["if"] = blk("control_if", "mx", "fe", {"CONDITION": [2, "kp"], "SUBSTACK": [2, "cx"]})
    b["kp"] = blk("sensing_keypressed", parent="if", inputs={"KEY_OPTION": [1, "km"]})
    b["km"] = blk("sensing_keyoptions", parent="kp", fields={"KEY_OPTION": ["right arrow", None]}, shadow=True)
    b["cx"] = blk("motion_changexby", None, "if", {"DX": num(2)})
    b["mx"] = blk("data_setvariableto", None, "if", {"VALUE": [3, "mxr", [10, ""]]}, {"VARIABLE": var("mx")})
    b["mxr"] = blk("sensing_mousex", parent="mx")
    # key hats count presses
    b["ks"] = blk("event_whenkeypressed", "cs", top=True, fields={"KEY_OPTION": ["space", None]})
    b["cs"] = blk("data_changevariableby", None, "ks", {"VALUE": num(1)}, {"VARIABLE": var("space")})
    b["ka"] = blk("event_whenkeypressed", "ca", top=True, fields={"KEY_OPTION": ["a", None]})
    b["ca"] = blk("data_changevariableby", None, "ka", {"VALUE": num(1)}, {"VARIABLE": var("a")})
    # clicks count and say so
    b["wc"] = blk("event_whenthisspriteclicked", "cc", top=True)
    b["cc"] = blk("data_changevariableby", "sc", "wc", {"VALUE": num(1)}, {"VARIABLE": var("clicks")})
    b["sc"] = blk("looks_say", None, "cc", {"MESSAGE": text("clicked")})
    # a clone moves away and says nothing
    b["sac"] = blk("control_start_as_clone", "gt", top=True)
    b["gt"] = blk("motion_gotoxy", None, "sac", {"X": num(100), "Y": num(100)})
    return b


def dog_blocks():
    b = {}
    b["df"] = blk("event_whenflagclicked", "th", top=True)
    b["th"] = blk("looks_thinkforsecs", "sy", "df", {"MESSAGE": text("hmm"), "SECS": num(1)})
    b["sy"] = blk("looks_say", None, "th", {"MESSAGE": text("bye")})
    return b


def project():
    sprite_costume = costume(SPRITE_SVG, "box", 20, 20)
    stage = {"isStage": True, "name": "Stage",
             "variables": {"var-" + n: [n, 0] for n in ["space", "a", "clicks", "answer", "mx"]},
             "lists": {}, "broadcasts": {}, "blocks": {}, "comments": {}, "currentCostume": 0,
             "costumes": [costume(BACKDROP_SVG, "backdrop", 240, 180)], "sounds": [], "volume": 100,
             "layerOrder": 0, "tempo": 60, "videoTransparency": 50, "videoState": "off",
             "textToSpeechLanguage": None}

    def sprite(name, blocks, x, y, layer):
        return {"isStage": False, "name": name, "variables": {}, "lists": {}, "broadcasts": {}, "blocks": blocks,
                "comments": {}, "currentCostume": 0, "costumes": [sprite_costume], "sounds": [], "volume": 100,
                "layerOrder": layer, "visible": True, "x": x, "y": y, "size": 100, "direction": 90,
                "draggable": False, "rotationStyle": "all around"}

    return {"targets": [stage, sprite("Cat", cat_blocks(), 0, 0, 1), sprite("Dog", dog_blocks(), -120, -80, 2)],
            "monitors": [], "extensions": [], "meta": {"semver": "3.0.0", "vm": "0.2.0", "agent": "clowder"}}


def write_sb3(out, project_json, svgs):
    """An sb3 with `project_json` and the SVG costumes `svgs`, with fixed zip timestamps."""
    files = [("project.json", json.dumps(project_json, indent=None, separators=(",", ":")))]
    for svg in svgs:
        files.append((hashlib.md5(svg.encode()).hexdigest() + ".svg", svg))
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    print(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "suites", "tests", "data", "WhiskerProbe.sb3")
    write_sb3(out, project(), (SPRITE_SVG, BACKDROP_SVG))


if __name__ == "__main__":
    main()
