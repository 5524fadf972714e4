//! `fetch` against a local HTTP server started by the test (no real network):
//! success, resume after an interruption, 404, Scratch 2, truncated bodies,
//! missing assets, rate limiting (429 + Retry-After) and a slow server.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clowder_dataset_tools::fetch::{self, Clock, FetchOptions, Row, Status};
use clowder_datasets::manifest::Manifest;
use clowder_datasets::sb3::md5_hex;

/// What the fixture server answers to one request.
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
    /// Send only this many body bytes (Content-Length still announces all), then close.
    truncate_at: Option<usize>,
    /// Wait this long before answering (a slow server).
    delay: Duration,
}

impl Reply {
    fn ok(body: Vec<u8>) -> Self {
        Self { status: 200, headers: Vec::new(), body, truncate_at: None, delay: Duration::ZERO }
    }
    fn status(status: u16) -> Self {
        Self::ok(format!("{{\"code\":\"{status}\"}}").into_bytes()).with_status(status)
    }
    fn with_status(mut self, s: u16) -> Self {
        self.status = s;
        self
    }
}

type Handler = dyn Fn(&str, usize) -> Reply + Send + Sync;

/// A tiny HTTP/1.1 server: one thread per connection, `Connection: close`.
/// The handler gets the request target and how many times it was requested before.
struct Server {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(handler: Arc<Handler>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let log2 = Arc::clone(&log);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (handler, log) = (Arc::clone(&handler), Arc::clone(&log2));
                std::thread::spawn(move || serve(stream, &*handler, &log));
            }
        });
        Self { addr, log }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests whose target starts with `prefix`.
    fn count(&self, prefix: &str) -> usize {
        self.log.lock().unwrap().iter().filter(|p| p.starts_with(prefix)).count()
    }

    fn total(&self) -> usize {
        self.log.lock().unwrap().len()
    }
}

fn serve(stream: TcpStream, handler: &Handler, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
    }
    let target = request_line.split_whitespace().nth(1).unwrap_or("").to_string();
    let nth = {
        let mut l = log.lock().unwrap();
        let n = l.iter().filter(|p| **p == target).count();
        l.push(target.clone());
        n
    };
    let reply = handler(&target, nth);
    std::thread::sleep(reply.delay);
    let mut out = stream;
    let mut head =
        format!("HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n", reply.status, reply.body.len());
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let body = &reply.body[..reply.truncate_at.unwrap_or(reply.body.len()).min(reply.body.len())];
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(body);
    let _ = out.flush();
    let _ = out.shutdown(std::net::Shutdown::Both);
}

/// A virtual clock: sleeping advances it at once (rate limits and backoffs
/// cost no real time) and is recorded.
#[derive(Default)]
struct FakeClock {
    now: Mutex<Duration>,
}

impl Clock for FakeClock {
    fn now(&self) -> Duration {
        *self.now.lock().unwrap()
    }
    fn sleep(&self, d: Duration) {
        *self.now.lock().unwrap() += d;
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// An asset: (md5ext, bytes).
fn asset(tag: &str, ext: &str) -> (String, Vec<u8>) {
    let bytes = match ext {
        "svg" => format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"><!-- {tag} --></svg>"),
        _ => format!("RIFF-fake-sound-{tag}"),
    }
    .into_bytes();
    (format!("{}.{ext}", md5_hex(&bytes)), bytes)
}

/// A small Scratch 3 project: a stage with a backdrop, a sprite with a
/// costume, a sound and a green-flag script.
fn project_json(backdrop: &str, costume: &str, sound: &str) -> Vec<u8> {
    let split = |m: &str| {
        let (id, ext) = m.split_once('.').unwrap();
        (id.to_string(), ext.to_string())
    };
    let (bid, bext) = split(backdrop);
    let (cid, cext) = split(costume);
    let (sid, sext) = split(sound);
    serde_json::to_vec(&serde_json::json!({
        "targets": [
            {"isStage": true, "name": "Stage", "variables": {}, "lists": {}, "broadcasts": {}, "blocks": {},
             "comments": {}, "currentCostume": 0, "sounds": [], "volume": 100, "layerOrder": 0,
             "costumes": [{"name": "b", "assetId": bid, "dataFormat": bext, "md5ext": backdrop,
                           "rotationCenterX": 2, "rotationCenterY": 2}]},
            {"isStage": false, "name": "Cat", "variables": {}, "lists": {}, "broadcasts": {}, "comments": {},
             "blocks": {
                "a": {"opcode": "event_whenflagclicked", "next": "b", "parent": null, "inputs": {}, "fields": {},
                      "shadow": false, "topLevel": true, "x": 0, "y": 0},
                "b": {"opcode": "motion_movesteps", "next": null, "parent": "a",
                      "inputs": {"STEPS": [1, [4, "10"]]}, "fields": {}, "shadow": false, "topLevel": false}},
             "currentCostume": 0, "volume": 100, "layerOrder": 1, "visible": true, "x": 0, "y": 0, "size": 100,
             "direction": 90, "draggable": false, "rotationStyle": "all around",
             "costumes": [{"name": "c", "assetId": cid, "dataFormat": cext, "rotationCenterX": 2, "rotationCenterY": 2}],
             "sounds": [{"name": "s", "assetId": sid, "dataFormat": sext, "md5ext": sound, "rate": 22050, "sampleCount": 100}]}
        ],
        "monitors": [], "extensions": [], "meta": {"semver": "3.0.0"}
    }))
    .unwrap()
}

/// The fixture "Scratch website".
struct World {
    /// id → (metadata JSON, project body) for projects the API knows.
    projects: BTreeMap<u64, (serde_json::Value, Vec<u8>)>,
    assets: BTreeMap<String, Vec<u8>>,
}

fn meta(id: u64, title: &str, remix_parent: Option<u64>) -> serde_json::Value {
    serde_json::json!({"id": id, "title": title, "author": {"username": "fixture"},
                       "project_token": format!("tok{id}_x"), "remix": {"parent": remix_parent, "root": remix_parent}})
}

impl World {
    fn new() -> Self {
        Self { projects: BTreeMap::new(), assets: BTreeMap::new() }
    }

    /// Adds a Scratch 3 project with three assets; returns their names.
    fn add(&mut self, id: u64, remix_parent: Option<u64>) -> [String; 3] {
        let backdrop = asset("backdrop-shared", "svg"); // the same backdrop in every project
        let costume = asset(&format!("costume-{id}"), "svg");
        let sound = asset(&format!("sound-{id}"), "wav");
        let json = project_json(&backdrop.0, &costume.0, &sound.0);
        self.projects.insert(id, (meta(id, &format!("Project {id}"), remix_parent), json));
        let names = [backdrop.0.clone(), costume.0.clone(), sound.0.clone()];
        for (n, b) in [backdrop, costume, sound] {
            self.assets.insert(n, b);
        }
        names
    }

    /// The default answer for a request target.
    fn answer(&self, target: &str) -> Reply {
        if let Some(rest) = target.strip_prefix("/api/projects/") {
            return match rest.parse::<u64>().ok().and_then(|id| self.projects.get(&id)) {
                Some((m, _)) => Reply::ok(serde_json::to_vec(m).unwrap()),
                None => Reply::status(404),
            };
        }
        if let Some(rest) = target.strip_prefix("/projects/") {
            let (id, query) = rest.split_once('?').unwrap_or((rest, ""));
            return match id.parse::<u64>().ok().and_then(|id| self.projects.get(&id).map(|p| (id, p))) {
                Some((id, (_, body))) if query == format!("token=tok{id}_x") => Reply::ok(body.clone()),
                _ => Reply::status(404),
            };
        }
        if let Some(rest) = target.strip_prefix("/assets/internalapi/asset/") {
            let name = rest.trim_end_matches("/get/");
            return match self.assets.get(name) {
                Some(b) => Reply::ok(b.clone()),
                None => Reply::status(404),
            };
        }
        Reply::status(404)
    }
}

fn options(server: &Server) -> FetchOptions {
    FetchOptions {
        api_base: format!("{}/api", server.url()),
        projects_base: format!("{}/projects", server.url()),
        assets_base: format!("{}/assets", server.url()),
        jobs: 3,
        rate: 50.0,
        burst: 5.0,
        max_attempts: 3,
        timeout: Duration::from_secs(10),
        ..FetchOptions::default()
    }
}

fn run(ids: &[u64], out: &Path, opts: &FetchOptions, clock: &dyn Clock, cancel: &AtomicBool) -> fetch::FetchSummary {
    fetch::fetch(ids, out, opts, clock, cancel, &|_, _| {}).unwrap()
}

fn row(s: &fetch::FetchSummary, id: u64) -> &Row {
    s.rows.iter().find(|r| r.id == id).unwrap()
}

#[test]
fn success_failures_and_report() {
    let mut w = World::new();
    let a101 = w.add(101, None);
    w.add(102, Some(101));
    // 104: a Scratch 2 project.
    w.projects.insert(104, (meta(104, "Old", None), br#"{"objName": "Stage", "children": []}"#.to_vec()));
    let a105 = w.add(105, None); // its costume is always truncated
    let a106 = w.add(106, None); // its sound is truncated once, then fine
    let a108 = w.add(108, None); // its sound is not on the asset server
    w.assets.remove(&a108[2]);
    w.add(109, None); // its project.json is always truncated
    let (p109, c105, s106) = ("/projects/109".to_string(), a105[1].clone(), a106[2].clone());
    let handler = move |target: &str, nth: usize| {
        let mut r = w.answer(target);
        if target.contains(&c105) || (target.contains(&s106) && nth == 0) || target.starts_with(&p109) {
            r.truncate_at = Some(r.body.len() / 2);
        }
        // Compressed bodies: Content-Length then counts gzip bytes (for 104's tiny
        // project.json more than the decoded body).
        if target.starts_with("/projects/101") || target.starts_with("/projects/104") {
            r.body = gzip(&r.body);
            r.headers.push(("Content-Encoding", "gzip".into()));
        }
        r
    };
    let server = Server::start(Arc::new(handler));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let clock = FakeClock::default();
    let s =
        run(&[109, 101, 102, 103, 104, 105, 106, 108, 101], &out, &options(&server), &clock, &AtomicBool::new(false));

    let ids: Vec<u64> = s.rows.iter().map(|r| r.id).collect();
    assert_eq!(ids, [101, 102, 103, 104, 105, 106, 108, 109], "one row per id, sorted");
    assert_eq!(row(&s, 101).status, Status::Ok);
    assert_eq!(row(&s, 101).assets, 3);
    assert_eq!(row(&s, 101).title, "Project 101");
    assert_eq!(row(&s, 102).status, Status::Ok);
    assert_eq!(row(&s, 102).remix_parent, Some(101));
    assert_eq!(row(&s, 103).status, Status::NotFound);
    assert!(row(&s, 103).error.contains("404"), "{:?}", row(&s, 103));
    assert_eq!(row(&s, 104).status, Status::Scratch2);
    assert_eq!(row(&s, 105).status, Status::Truncated);
    assert!(row(&s, 105).error.contains(&a105[1]) && row(&s, 105).error.contains("3 attempts"), "{:?}", row(&s, 105));
    assert_eq!(row(&s, 106).status, Status::Ok, "a body truncated once is retried: {:?}", row(&s, 106));
    assert_eq!(row(&s, 108).status, Status::AssetMissing);
    assert!(row(&s, 108).error.contains(&a108[2]));
    assert_eq!(row(&s, 109).status, Status::Truncated);
    assert_eq!(server.count("/projects/109"), 3, "retried up to max_attempts");
    assert_eq!(server.count("/api/projects/103"), 1, "a 404 is not retried");
    // The shared backdrop was downloaded once and served from the cache afterwards.
    assert_eq!(server.count(&format!("/assets/internalapi/asset/{}", a101[0])), 1);

    // The .sb3 holds project.json and the assets, each matching its MD5.
    let sb3 = std::fs::read(out.join("101.sb3")).unwrap();
    clowder_datasets::sb3::verify_sb3(&sb3, &Default::default(), 1 << 20).unwrap();
    assert!(!out.join("103.sb3").exists() && !out.join("105.sb3").exists() && !out.join("108.sb3").exists());
    // It loads in the VM and is measured in the manifest, with the API's metadata.
    let m = Manifest::read(&out).unwrap().unwrap();
    let files: Vec<&str> = m.projects.iter().map(|e| e.file.as_str()).collect();
    assert_eq!(files, ["101.sb3", "102.sb3", "106.sb3"]);
    let e102 = &m.projects[1];
    assert_eq!((e102.scratch_id, e102.remix_parent, e102.title.as_str()), (Some(102), Some(101), "Project 102"));
    assert!(e102.source.contains("scratch.mit.edu/projects/102"));
    let size = e102.size.as_ref().expect("loads in the VM");
    assert_eq!((size.statements, size.assets, size.assets_missing), (2, 3, 0));

    // The report: header and one row per id.
    let report = std::fs::read_to_string(out.join(fetch::REPORT_FILE)).unwrap();
    eprintln!("{report}");
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines[0], "id,status,file,bytes,hash,assets,title,author,remix_parent,error");
    assert_eq!(lines.len(), 9);
    assert!(lines[2].starts_with("102,ok,102.sb3,"), "{}", lines[2]);
    assert!(lines[3].starts_with("103,not_found,,"), "{}", lines[3]);

    // Same server answers, same bytes: a fresh fetch elsewhere gives identical files.
    let out2 = dir.path().join("out2");
    run(&[101], &out2, &options(&server), &clock, &AtomicBool::new(false));
    assert_eq!(std::fs::read(out2.join("101.sb3")).unwrap(), sb3);

    // A second run skips every final row: only the transient failures (105, 109) are asked again.
    let before = server.total();
    let s2 = run(&[101, 102, 103, 104, 105, 106, 108, 109], &out, &options(&server), &clock, &AtomicBool::new(false));
    assert_eq!(s2.reused, 6);
    assert_eq!(server.count("/api/projects/101"), 2, "101 not fetched again (the second request was out2)");
    assert_eq!(server.count("/api/projects/103"), 1);
    let asked_again = server.total() - before;
    assert_eq!(asked_again, 9, "105: api + project + 3 × costume (other assets cached); 109: api + 3 × project");
}

#[test]
fn resume_after_interruption() {
    let mut w = World::new();
    let a201 = w.add(201, None);
    let a202 = w.add(202, None);
    let cancel = Arc::new(AtomicBool::new(false));
    let (stop_on, cancel2) = (a202[2].clone(), Arc::clone(&cancel));
    // The first run is "killed" while 202's sound is being served.
    let handler = move |target: &str, nth: usize| {
        if target.contains(&stop_on) && nth == 0 {
            cancel2.store(true, Ordering::SeqCst);
            let mut r = w.answer(target);
            r.delay = Duration::from_millis(200);
            return r;
        }
        w.answer(target)
    };
    let server = Server::start(Arc::new(handler));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    // Leftovers of a process killed earlier while writing.
    std::fs::write(out.join(".201.sb3.999.ThreadId(3).tmp"), b"half").unwrap();
    let mut opts = options(&server);
    opts.jobs = 1;
    let clock = FakeClock::default();
    let s = run(&[201, 202], &out, &opts, &clock, &cancel);
    assert_eq!(row(&s, 201).status, Status::Ok);
    assert_eq!(row(&s, 202).status, Status::Cancelled);
    assert!(!out.join("202.sb3").exists(), "nothing half-written under a final name");
    assert!(!out.join(".201.sb3.999.ThreadId(3).tmp").exists(), "stale temporaries removed");
    let first = std::fs::read(out.join("201.sb3")).unwrap();

    cancel.store(false, Ordering::SeqCst);
    let s = run(&[201, 202], &out, &opts, &clock, &cancel);
    assert_eq!(row(&s, 201).status, Status::Ok);
    assert_eq!(row(&s, 202).status, Status::Ok);
    assert_eq!(s.reused, 1);
    assert_eq!(server.count("/api/projects/201"), 1, "the complete project is not fetched again");
    assert_eq!(server.count(&format!("/assets/internalapi/asset/{}", a202[1])), 1, "assets already fetched are reused");
    assert_eq!(server.count(&format!("/assets/internalapi/asset/{}", a202[2])), 2);
    assert_eq!(std::fs::read(out.join("201.sb3")).unwrap(), first);
    assert!(!out.join(fetch::STATE_DIR).join("assets").exists(), "the asset cache is dropped once all is done");

    // A damaged file is detected by its hash and downloaded again.
    std::fs::write(out.join("201.sb3"), &first[..first.len() / 2]).unwrap();
    let s = run(&[201, 202], &out, &opts, &clock, &cancel);
    assert_eq!((s.reused, row(&s, 201).status), (1, Status::Ok));
    assert_eq!(std::fs::read(out.join("201.sb3")).unwrap(), first);
    assert_eq!(server.count(&format!("/assets/internalapi/asset/{}", a201[1])), 2);
}

#[test]
fn rate_limiting_honours_retry_after() {
    let mut w = World::new();
    w.add(301, None);
    w.add(302, None);
    let handler = move |target: &str, nth: usize| {
        // The API answers 429 twice (Retry-After: 7 s), then serves.
        if target == "/api/projects/301" && nth < 2 {
            let mut r = Reply::status(429);
            r.headers.push(("Retry-After", "7".into()));
            return r;
        }
        // Without Retry-After, the client backs off on its own.
        if target == "/api/projects/302" && nth < 1 {
            return Reply::status(429);
        }
        w.answer(target)
    };
    let server = Server::start(Arc::new(handler));
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(&server);
    opts.jobs = 1;
    opts.rate = 2.0;
    opts.burst = 1.0;
    let clock = FakeClock::default();
    let s = run(&[301, 302], &dir.path().join("out"), &opts, &clock, &AtomicBool::new(false));
    assert_eq!(row(&s, 301).status, Status::Ok);
    assert_eq!(row(&s, 302).status, Status::Ok);
    assert_eq!(server.count("/api/projects/301"), 3);
    assert_eq!(server.count("/api/projects/302"), 2);
    // 2 × 7 s of Retry-After, 1 s backoff, and 2 requests/s for the 12 requests made
    // (burst 1): the virtual clock shows the waits were honoured.
    let t = clock.now().as_secs_f64();
    assert_eq!(server.total(), 12);
    assert!(t >= 14.0 + 1.0 + 11.0 / 2.0 - 1e-6, "waited {t} s");

    // A server that never stops saying 429 ends in a rate_limited row, not a hang.
    let server = Server::start(Arc::new(|_: &str, _| Reply::status(429)));
    let mut opts = options(&server);
    opts.max_rate_limited = 3;
    let s = run(&[303], &dir.path().join("out3"), &opts, &clock, &AtomicBool::new(false));
    assert_eq!(row(&s, 303).status, Status::RateLimited);
    assert_eq!(server.total(), 4);
}

#[test]
fn slow_server_times_out_and_oversized_bodies_are_refused() {
    let mut w = World::new();
    w.add(401, None);
    w.add(402, None);
    let handler = move |target: &str, _| {
        let mut r = w.answer(target);
        if target.starts_with("/api/projects/401") {
            r.delay = Duration::from_millis(1500);
        }
        r
    };
    let server = Server::start(Arc::new(handler));
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(&server);
    opts.timeout = Duration::from_millis(300);
    opts.max_attempts = 2;
    opts.limits.max_asset_bytes = 40; // every asset here is larger
    let s = run(&[401, 402], &dir.path().join("out"), &opts, &FakeClock::default(), &AtomicBool::new(false));
    assert_eq!(row(&s, 401).status, Status::Network);
    assert!(
        row(&s, 401).error.contains("timed out") && row(&s, 401).error.contains("2 attempts"),
        "{:?}",
        row(&s, 401)
    );
    assert_eq!(row(&s, 402).status, Status::TooLarge);
    assert!(row(&s, 402).error.contains("over the limit of 40"), "{:?}", row(&s, 402));
}
