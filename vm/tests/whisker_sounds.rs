//! `play sound until done` under the `whisker` profile waits for the buffer Whisker's browser
//! decodes from the sound file, not for project.json's `sampleCount / rate` (engine `+sem51`).
//!
//! `data/whisker_sound_buffers.tsv` holds `buffer.length`, `sampleRate` and `duration` of every
//! distinct WAV sound of the corpora, read in the real Whisker by
//! `scripts/whisker_sound_buffers.py`.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use clowder_vm::project::{LoadLimits, load};
use clowder_vm::{Profile, Value, Vm, VmOptions};

/// md5ext → duration in seconds, as Whisker read it.
fn whisker_durations() -> BTreeMap<String, f64> {
    include_str!("data/whisker_sound_buffers.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("md5ext"))
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), 4, "a row of four columns: {l}");
            (cols[0].to_string(), cols[3].parse::<f64>().expect("a duration"))
        })
        .collect()
}

#[test]
fn every_corpus_sound_lasts_as_whiskers_decoded_buffer() {
    let Some(dir) = common::corpora() else {
        common::skip_note("corpora folder not found (set CLOWDER_CORPORA): Whisker's sound buffers");
        return;
    };
    let table = whisker_durations();
    let mut files = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("a corpora folder").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "sb3") {
                files.push(p);
            }
        }
    }
    files.sort();
    let (mut checked, mut stale) = (0, 0);
    let mut wrong = Vec::new();
    for f in &files {
        let Ok(p) = clowder_vm::project::Project::load_path(f, &LoadLimits::default()) else { continue };
        for s in p.targets.iter().flat_map(|t| &t.sounds) {
            let Some(&want) = table.get(&s.md5ext) else { continue };
            let got = s.wav.as_ref().map(clowder_vm::whisker::sound_secs);
            if got != Some(want) {
                wrong.push(format!("{}: {} ({}): {got:?}, Whisker {want}", f.display(), s.name, s.md5ext));
            }
            checked += 1;
            // Metadata that would end the wait in another step than the buffer does.
            if (30.0 * s.sample_count / s.rate).ceil() != (30.0 * want).ceil() {
                stale += 1;
            }
        }
    }
    assert!(wrong.is_empty(), "{} of {checked} sounds differ:\n{}", wrong.len(), wrong.join("\n"));
    assert!(checked >= table.len(), "only {checked} corpus sounds found for {} rows", table.len());
    eprintln!("{checked} sounds of {} projects as Whisker decodes them; {stale} with stale metadata", files.len());
}

/// One PCM second (22 050 frames of silence at 22 050 Hz) in a WAV file.
fn one_second_wav() -> Vec<u8> {
    let frames: u32 = 22050;
    let mut b = b"RIFF".to_vec();
    b.extend_from_slice(&(36 + 2 * frames).to_le_bytes());
    b.extend_from_slice(b"WAVEfmt ");
    b.extend_from_slice(&16u32.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes()); // PCM
    b.extend_from_slice(&1u16.to_le_bytes()); // mono
    b.extend_from_slice(&22050u32.to_le_bytes());
    b.extend_from_slice(&44100u32.to_le_bytes());
    b.extend_from_slice(&2u16.to_le_bytes());
    b.extend_from_slice(&16u16.to_le_bytes());
    b.extend_from_slice(b"data");
    b.extend_from_slice(&(2 * frames).to_le_bytes());
    b.resize(b.len() + 2 * frames as usize, 0);
    b
}

/// A stage that plays a sound whose metadata says 2 s (44 100 samples at 22 050 Hz) and whose
/// file holds 1 s, then sets `done`; `with_file` leaves the file out when false.
fn stale_sound_project(with_file: bool) -> Arc<clowder_vm::Project> {
    let json = serde_json::json!({
        "targets": [{
            "isStage": true, "name": "Stage", "variables": {"d": ["done", 0]}, "lists": {}, "broadcasts": {},
            "blocks": {
                "a": {"opcode": "event_whenflagclicked", "next": "b", "parent": null, "inputs": {}, "fields": {},
                      "shadow": false, "topLevel": true, "x": 0, "y": 0},
                "b": {"opcode": "sound_playuntildone", "next": "c", "parent": "a",
                      "inputs": {"SOUND_MENU": [1, "m"]}, "fields": {}, "shadow": false, "topLevel": false},
                "m": {"opcode": "sound_sounds_menu", "next": null, "parent": "b", "inputs": {},
                      "fields": {"SOUND_MENU": ["s", null]}, "shadow": true, "topLevel": false},
                "c": {"opcode": "data_setvariableto", "next": null, "parent": "b",
                      "inputs": {"VALUE": [1, [10, "yes"]]}, "fields": {"VARIABLE": ["done", "d"]},
                      "shadow": false, "topLevel": false}
            },
            "currentCostume": 0, "layerOrder": 0,
            "costumes": [{"name": "b", "assetId": "62640000000000000000000000000000", "md5ext": "62640000000000000000000000000000.svg", "dataFormat": "svg",
                          "rotationCenterX": 240, "rotationCenterY": 180}], "volume": 100,
            "sounds": [{"name": "s", "assetId": "736e6400000000000000000000000000", "md5ext": "736e6400000000000000000000000000.wav", "dataFormat": "wav",
                        "rate": 22050, "sampleCount": 44100}]
        }],
        "monitors": [], "extensions": [], "meta": {"semver": "3.0.0"}
    });
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    zip.start_file("project.json", opts).expect("zip");
    zip.write_all(json.to_string().as_bytes()).expect("zip");
    zip.start_file("62640000000000000000000000000000.svg", opts).expect("zip");
    zip.write_all(br#"<svg xmlns="http://www.w3.org/2000/svg" width="480" height="360"/>"#).expect("zip");
    if with_file {
        zip.start_file("736e6400000000000000000000000000.wav", opts).expect("zip");
        zip.write_all(&one_second_wav()).expect("zip");
    }
    let bytes = zip.finish().expect("zip").into_inner();
    Arc::new(load(&bytes, "stale_sound.sb3", &LoadLimits::default()).expect("the test project loads"))
}

/// The step after which `done` reads "yes".
fn done_after(profile: Profile, with_file: bool) -> u64 {
    let mut vm = Vm::new(stale_sound_project(with_file), VmOptions { profile, seed: 1, ..VmOptions::default() });
    vm.green_flag();
    while vm.steps() < 200 {
        vm.step();
        if matches!(vm.variable(vm.stage_id(), "done"), Some(Value::Str(s)) if &*s == "yes") {
            return vm.steps();
        }
    }
    panic!("the sound never ended");
}

#[test]
fn whisker_waits_for_the_file_and_scratch_vm_profiles_for_the_metadata() {
    // Whisker: 1 s is 30 steps of its stack timer; without the file, the metadata's 2 s.
    let with_file = done_after(Profile::Whisker, true);
    let without = done_after(Profile::Whisker, false);
    assert_eq!(without - with_file, 30, "whisker: {with_file} steps with the file, {without} without");
    // The default profile keeps project.json's `sampleCount / rate` (DESIGN: no audio decoding).
    assert_eq!(done_after(Profile::Default, true), done_after(Profile::Default, false));
}
