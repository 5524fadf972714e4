#!/usr/bin/env python3
"""Writes suites/tests/data/BetweenTests.sb3: a small project of our own for what the real
Whisker keeps from one test of a file to the next (issue 32; `suites/tests/between_tests.rs`,
with `BetweenTests.js`). Stage variable `score`; sprites `Cat` and `Dog`, 40 x 40 squares, both
at (0, 0), the dog in front. Keys act on the cat: `h` hides it, `c` clones it, `s` adds 5 to
the score, `m` moves it 50 right. Deterministic bytes (fixed zip timestamps).

    scripts/whisker_between_project.py [OUT.sb3]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from whisker_probe_project import BACKDROP_SVG, SPRITE_SVG, blk, costume, num, write_sb3  # noqa: E402


def cat_blocks():
    b = {}
    acts = {
        "h": ("looks_hide", {}, {}),
        "c": ("control_create_clone_of", {"CLONE_OPTION": [1, "cm"]}, {}),
        "s": ("data_changevariableby", {"VALUE": num(5)}, {"VARIABLE": ["score", "var-score"]}),
        "m": ("motion_changexby", {"DX": num(50)}, {}),
    }
    for key, (opcode, inputs, fields) in acts.items():
        b["k" + key] = blk("event_whenkeypressed", "a" + key, top=True, fields={"KEY_OPTION": [key, None]})
        if key == "c":
            inputs = {"CLONE_OPTION": [1, "cm"]}
            b["cm"] = blk("control_create_clone_of_menu", parent="ac", fields={"CLONE_OPTION": ["_myself_", None]},
                          shadow=True)
        b["a" + key] = blk(opcode, None, "k" + key, inputs, fields)
    return b


def project():
    sprite_costume = costume(SPRITE_SVG, "square", 20, 20)
    stage = {"isStage": True, "name": "Stage", "variables": {"var-score": ["score", 0]}, "lists": {},
             "broadcasts": {}, "blocks": {}, "comments": {}, "currentCostume": 0,
             "costumes": [costume(BACKDROP_SVG, "backdrop", 240, 180)], "sounds": [], "volume": 100,
             "layerOrder": 0, "tempo": 60, "videoTransparency": 50, "videoState": "off",
             "textToSpeechLanguage": None}

    def sprite(name, blocks, layer):
        return {"isStage": False, "name": name, "variables": {}, "lists": {}, "broadcasts": {}, "blocks": blocks,
                "comments": {}, "currentCostume": 0, "costumes": [sprite_costume], "sounds": [], "volume": 100,
                "layerOrder": layer, "visible": True, "x": 0, "y": 0, "size": 100, "direction": 90,
                "draggable": False, "rotationStyle": "all around"}

    return {"targets": [stage, sprite("Cat", cat_blocks(), 1), sprite("Dog", {}, 2)],
            "monitors": [], "extensions": [], "meta": {"semver": "3.0.0", "vm": "0.2.0", "agent": "clowder"}}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "suites", "tests", "data", "BetweenTests.sb3")
    write_sb3(out, project(), (SPRITE_SVG, BACKDROP_SVG))


if __name__ == "__main__":
    main()
