//! Coverage targets: the statement blocks of scripts that start with a hat.

use clowder_vm::project::{BlockIdx, Input, Project};

/// Hat opcodes: blocks that start a script when an event happens.
pub fn is_hat(opcode: &str) -> bool {
    opcode.starts_with("event_when")
        || matches!(opcode, "control_start_as_clone" | "procedures_definition")
        || opcode.ends_with("_whenbuttonpressed")
        || opcode.contains("_when")
}

/// The statement blocks (by index) reachable from a hat through `next` links and
/// substack inputs, hats included; reporters plugged into inputs are not statements.
pub fn statement_targets(project: &Project) -> Vec<BlockIdx> {
    let mut out = Vec::new();
    let mut seen = vec![false; project.blocks.len()];
    for target in &project.targets {
        for &top in &target.scripts {
            if !is_hat(&project.block(top).opcode) {
                continue;
            }
            let mut stack = vec![top];
            while let Some(start) = stack.pop() {
                let mut cur = Some(start);
                while let Some(b) = cur {
                    if std::mem::replace(&mut seen[b as usize], true) {
                        break;
                    }
                    out.push(b);
                    let block = project.block(b);
                    for (name, input) in &block.inputs {
                        if let Input::Block(first) = input
                            && name.starts_with("SUBSTACK")
                        {
                            stack.push(*first);
                        }
                    }
                    cur = block.next;
                }
            }
        }
    }
    out.sort_unstable();
    out
}
