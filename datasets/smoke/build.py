#!/usr/bin/env python3
"""Builds the smoke dataset: small Scratch 3 projects written for clowder.

Run from anywhere: `python3 datasets/smoke/build.py`. The output is
deterministic (sorted keys, sequential block ids), so re-running it changes
nothing unless this file changed.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


class Script:
    """Accumulates the blocks of one target with sequential ids."""

    def __init__(self, prefix):
        self.blocks = {}
        self.prefix = prefix
        self.n = 0

    def _id(self):
        self.n += 1
        return f"{self.prefix}{self.n}"

    def block(self, opcode, inputs=None, fields=None, parent=None, top=False, shadow=False, mutation=None):
        bid = self._id()
        b = {"opcode": opcode, "next": None, "parent": parent, "inputs": inputs or {},
             "fields": fields or {}, "shadow": shadow, "topLevel": top}
        if top:
            b["x"] = 0
            b["y"] = 0
        if mutation:
            b["mutation"] = mutation
        self.blocks[bid] = b
        return bid

    def stack(self, hat, body, parent=None):
        """Links `body` (list of block ids) after `hat`; returns the hat id."""
        prev = hat
        for b in body:
            if prev is not None:
                self.blocks[prev]["next"] = b
            self.blocks[b]["parent"] = prev if prev is not None else parent
            prev = b
        return hat

    def substack(self, owner, name, body):
        if not body:
            return
        self.blocks[owner]["inputs"][name] = [2, body[0]]
        self.blocks[body[0]]["parent"] = owner
        for a, b in zip(body, body[1:]):
            self.blocks[a]["next"] = b
            self.blocks[b]["parent"] = a

    def reporter(self, owner, name, rid):
        """Plugs reporter `rid` into input `name` of `owner`, over an empty text shadow."""
        self.blocks[owner]["inputs"][name] = [3, rid, [10, ""]]
        self.blocks[rid]["parent"] = owner


def num(v):
    return [1, [4, str(v)]]


def text(v):
    return [1, [10, str(v)]]


def var_input(name, vid):
    return [3, [12, name, vid], [10, ""]]


def hat(s, opcode, fields=None):
    return s.block(opcode, fields=fields, top=True)


def key_menu(s, owner, key):
    m = s.block("sensing_keyoptions", fields={"KEY_OPTION": [key, None]}, parent=owner, shadow=True)
    s.blocks[owner]["inputs"]["KEY_OPTION"] = [1, m]


def broadcast_input(name, bid):
    return [1, [11, name, bid]]


def costume(name):
    return {"assetId": "cd21514d0531fdffb22204e0ec5ed84a", "name": name, "md5ext": "cd21514d0531fdffb22204e0ec5ed84a.svg",
            "dataFormat": "svg", "rotationCenterX": 48, "rotationCenterY": 50}


def backdrop(name):
    return {"assetId": "739b5e2a2435f6e1ec2993791b423146", "name": name, "md5ext": "739b5e2a2435f6e1ec2993791b423146.svg",
            "dataFormat": "svg", "rotationCenterX": 240, "rotationCenterY": 180}


def stage(blocks=None, variables=None, broadcasts=None, lists=None):
    return {"isStage": True, "name": "Stage", "variables": variables or {}, "lists": lists or {},
            "broadcasts": broadcasts or {}, "blocks": blocks or {}, "comments": {}, "currentCostume": 0,
            "costumes": [backdrop("backdrop1")], "sounds": [], "volume": 100, "layerOrder": 0, "tempo": 60,
            "videoTransparency": 50, "videoState": "on", "textToSpeechLanguage": None}


def sprite(name, blocks, layer, x=0, y=0, variables=None):
    return {"isStage": False, "name": name, "variables": variables or {}, "lists": {}, "broadcasts": {},
            "blocks": blocks, "comments": {}, "currentCostume": 0, "costumes": [costume("costume1"), costume("costume2")],
            "sounds": [], "volume": 100, "layerOrder": layer, "visible": True, "x": x, "y": y, "size": 100,
            "direction": 90, "draggable": False, "rotationStyle": "all around"}


def project(targets):
    return {"targets": targets, "monitors": [], "extensions": [],
            "meta": {"semver": "3.0.0", "vm": "0.2.0", "agent": "clowder smoke builder"}}


def counter():
    """Space bar counts up; clicking the cat reports few/many (if/else on a variable)."""
    s = Script("c")
    h = hat(s, "event_whenflagclicked")
    setv = s.block("data_setvariableto", inputs={"VALUE": text(0)}, fields={"VARIABLE": ["count", "vcount"]})
    forever = s.block("control_forever")
    s.stack(h, [setv, forever])
    ifelse = s.block("control_if_else")
    s.substack(forever, "SUBSTACK", [ifelse])
    kp = s.block("sensing_keypressed", parent=ifelse)
    key_menu(s, kp, "space")
    s.blocks[ifelse]["inputs"]["CONDITION"] = [2, kp]
    chg = s.block("data_changevariableby", inputs={"VALUE": num(1)}, fields={"VARIABLE": ["count", "vcount"]})
    wait = s.block("control_wait", inputs={"DURATION": num(0.1)})
    s.substack(ifelse, "SUBSTACK", [chg])
    s.substack(ifelse, "SUBSTACK2", [wait])

    h2 = hat(s, "event_whenthisspriteclicked")
    ie = s.block("control_if_else")
    s.stack(h2, [ie])
    gt = s.block("operator_gt", inputs={"OPERAND1": var_input("count", "vcount"), "OPERAND2": text(5)}, parent=ie)
    s.blocks[ie]["inputs"]["CONDITION"] = [2, gt]
    many = s.block("looks_say", inputs={"MESSAGE": text("many")})
    few = s.block("looks_say", inputs={"MESSAGE": text("few")})
    s.substack(ie, "SUBSTACK", [many])
    s.substack(ie, "SUBSTACK2", [few])
    return project([stage(variables={"vcount": ["count", 0]}), sprite("Cat", s.blocks, 1)])


def relay():
    """A waits, then broadcasts; B moves and broadcasts-and-waits; the stage answers."""
    a = Script("a")
    h = hat(a, "event_whenflagclicked")
    w = a.block("control_wait", inputs={"DURATION": num(1)})
    bc = a.block("event_broadcast", inputs={"BROADCAST_INPUT": broadcast_input("go", "bgo")})
    a.stack(h, [w, bc])

    b = Script("b")
    h = hat(b, "event_whenbroadcastreceived", fields={"BROADCAST_OPTION": ["go", "bgo"]})
    rep = b.block("control_repeat", inputs={"TIMES": num(3)})
    bw = b.block("event_broadcastandwait", inputs={"BROADCAST_INPUT": broadcast_input("done", "bdone")})
    say = b.block("looks_say", inputs={"MESSAGE": text("finished")})
    b.stack(h, [rep, bw, say])
    mv = b.block("motion_movesteps", inputs={"STEPS": num(10)})
    b.substack(rep, "SUBSTACK", [mv])

    st = Script("s")
    h = hat(st, "event_whenbroadcastreceived", fields={"BROADCAST_OPTION": ["done", "bdone"]})
    setv = st.block("data_setvariableto", inputs={"VALUE": text(1)}, fields={"VARIABLE": ["relayed", "vrel"]})
    wait = st.block("control_wait", inputs={"DURATION": num(0.5)})
    st.stack(h, [setv, wait])
    return project([stage(st.blocks, variables={"vrel": ["relayed", 0]}, broadcasts={"bgo": "go", "bdone": "done"}),
                    sprite("Sender", a.blocks, 1), sprite("Mover", b.blocks, 2, x=-100)])


def arrows():
    """Arrow keys move the sprite; a watcher reacts once it reaches the right side."""
    s = Script("k")
    for key, dx in (("left arrow", -20), ("right arrow", 20)):
        h = hat(s, "event_whenkeypressed", fields={"KEY_OPTION": [key, None]})
        ch = s.block("motion_changexby", inputs={"DX": num(dx)})
        s.stack(h, [ch])
    h = hat(s, "event_whenflagclicked")
    go = s.block("motion_gotoxy", inputs={"X": num(0), "Y": num(0)})
    wu = s.block("control_wait_until")
    say = s.block("looks_say", inputs={"MESSAGE": text("right side!")})
    s.stack(h, [go, wu, say])
    xp = s.block("motion_xposition", parent=wu)
    gt = s.block("operator_gt", inputs={"OPERAND2": text(50)}, parent=wu)
    s.reporter(gt, "OPERAND1", xp)
    s.blocks[wu]["inputs"]["CONDITION"] = [2, gt]
    return project([stage(), sprite("Player", s.blocks, 1)])


def clicker():
    """Two buttons: clicking the right one three times wins, the wrong one resets."""
    g = Script("g")
    h = hat(g, "event_whenthisspriteclicked")
    ch = g.block("data_changevariableby", inputs={"VALUE": num(1)}, fields={"VARIABLE": ["score", "vscore"]})
    iff = g.block("control_if")
    g.stack(h, [ch, iff])
    eq = g.block("operator_equals", inputs={"OPERAND1": var_input("score", "vscore"), "OPERAND2": text(3)}, parent=iff)
    g.blocks[iff]["inputs"]["CONDITION"] = [2, eq]
    win = g.block("event_broadcast", inputs={"BROADCAST_INPUT": broadcast_input("win", "bwin")})
    g.substack(iff, "SUBSTACK", [win])

    r = Script("r")
    h = hat(r, "event_whenthisspriteclicked")
    setv = r.block("data_setvariableto", inputs={"VALUE": text(0)}, fields={"VARIABLE": ["score", "vscore"]})
    hide = r.block("looks_hide")
    wait = r.block("control_wait", inputs={"DURATION": num(0.2)})
    show = r.block("looks_show")
    r.stack(h, [setv, hide, wait, show])

    st = Script("s")
    h = hat(st, "event_whenflagclicked")
    setv = st.block("data_setvariableto", inputs={"VALUE": text(0)}, fields={"VARIABLE": ["score", "vscore"]})
    st.stack(h, [setv])
    h = hat(st, "event_whenbroadcastreceived", fields={"BROADCAST_OPTION": ["win", "bwin"]})
    setw = st.block("data_setvariableto", inputs={"VALUE": text("yes")}, fields={"VARIABLE": ["won", "vwon"]})
    st.stack(h, [setw])
    h = hat(st, "event_whenstageclicked")
    setw = st.block("data_setvariableto", inputs={"VALUE": text("no")}, fields={"VARIABLE": ["won", "vwon"]})
    st.stack(h, [setw])
    return project([stage(st.blocks, variables={"vscore": ["score", 0], "vwon": ["won", "no"]}, broadcasts={"bwin": "win"}),
                    sprite("Good", g.blocks, 1, x=-100), sprite("Bad", r.blocks, 2, x=100)])


def guess():
    """Random target number; keys 'u'/'d' steer a guess; nested if/else and repeat until."""
    s = Script("q")
    h = hat(s, "event_whenflagclicked")
    rnd = s.block("operator_random", inputs={"FROM": num(1), "TO": num(10)})
    sett = s.block("data_setvariableto", fields={"VARIABLE": ["target", "vt"]})
    s.reporter(sett, "VALUE", rnd)
    setg = s.block("data_setvariableto", inputs={"VALUE": text(5)}, fields={"VARIABLE": ["guess", "vg"]})
    until = s.block("control_repeat_until")
    say = s.block("looks_say", inputs={"MESSAGE": text("got it")})
    s.stack(h, [sett, setg, until, say])
    eq = s.block("operator_equals", inputs={"OPERAND1": var_input("guess", "vg"), "OPERAND2": var_input("target", "vt")}, parent=until)
    s.blocks[until]["inputs"]["CONDITION"] = [2, eq]
    ie = s.block("control_if_else")
    wait = s.block("control_wait", inputs={"DURATION": num(0.1)})
    s.substack(until, "SUBSTACK", [ie, wait])
    lt = s.block("operator_lt", inputs={"OPERAND1": var_input("guess", "vg"), "OPERAND2": var_input("target", "vt")}, parent=ie)
    s.blocks[ie]["inputs"]["CONDITION"] = [2, lt]
    low = s.block("looks_think", inputs={"MESSAGE": text("higher")})
    high = s.block("looks_think", inputs={"MESSAGE": text("lower")})
    s.substack(ie, "SUBSTACK", [low])
    s.substack(ie, "SUBSTACK2", [high])
    for key, d in (("u", 1), ("d", -1)):
        h = hat(s, "event_whenkeypressed", fields={"KEY_OPTION": [key, None]})
        ch = s.block("data_changevariableby", inputs={"VALUE": num(d)}, fields={"VARIABLE": ["guess", "vg"]})
        s.stack(h, [ch])
    return project([stage(variables={"vt": ["target", 0], "vg": ["guess", 0]}), sprite("Oracle", s.blocks, 1)])


PROJECTS = {"counter": counter, "relay": relay, "arrows": arrows, "clicker": clicker, "guess": guess}

if __name__ == "__main__":
    for name, fn in PROJECTS.items():
        with open(os.path.join(HERE, f"{name}.json"), "w") as f:
            json.dump(fn(), f, indent=1, sort_keys=True)
            f.write("\n")
    print(f"wrote {len(PROJECTS)} projects to {HERE}")
