//! The manual speaks of every store the catalog knows: the README's stores table, the stores
//! page and the suites page have a row for each; every flag is in the usage page's table,
//! every link resolves (to the heading it names, too), the README and the performance page
//! keep their length, and the Kubernetes manifests parse.

use dbcompare::catalog::StoreKind;
use serde::Deserialize;

fn read(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// The first cells of the markdown table rows of `text`.
fn first_cells(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split(" |").next())
        .map(|cell| {
            cell.split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[test]
fn every_store_has_its_row_in_the_readme_the_stores_and_the_suites_page() {
    for (path, text) in [
        ("README.md", read("README.md")),
        ("docs/stores.md", read("docs/stores.md")),
        ("docs/suites.md", read("docs/suites.md")),
    ] {
        let cells = first_cells(&text);
        for &kind in StoreKind::all() {
            assert!(
                cells.iter().any(|c| c == kind.name()),
                "{path} has no table row for {kind}"
            );
        }
    }
}

/// The hint dbcompare prints for a store that cannot run here names a script: it exists.
#[test]
fn every_install_hint_names_a_script_that_exists() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let install = read("provisioning/install.sh");
    for &kind in StoreKind::all() {
        let Some(server) = kind.server() else {
            continue;
        };
        let hint = dbcompare::server::install_hint(kind);
        if server.launcher.is_some() {
            assert!(
                hint.contains(&format!("provisioning/install.sh {kind}")),
                "{hint}"
            );
            assert!(
                install.contains(&format!("    {kind})")),
                "provisioning/install.sh installs no {kind}"
            );
        } else {
            let script = format!("provisioning/{kind}.sh");
            assert!(hint.contains(&script), "{hint}");
            assert!(root.join(&script).is_file(), "{script} is missing");
        }
    }
}

/// Every flag of `dbcompare run` has its row in the usage page's table of flags: a row whose
/// first cell names it (`--url STORE=URL`, `-p`, `--property`).
#[test]
fn every_run_flag_is_in_the_usage_page() {
    use clap::CommandFactory;
    let usage = read("docs/usage.md");
    let flag_cells: Vec<&str> = usage
        .lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split(" |").next())
        .collect();
    let cli = dbcompare::cli::Cli::command();
    let run = cli.find_subcommand("run").expect("a run subcommand");
    let longs: Vec<&str> = run.get_arguments().filter_map(|a| a.get_long()).collect();
    assert!(longs.len() > 30, "{longs:?}");
    let missing: Vec<String> = longs
        .iter()
        .filter(|long| {
            let flag = format!("`--{long}");
            !flag_cells.iter().any(|cell| {
                cell.match_indices(&flag)
                    .any(|(i, _)| matches!(cell[i + flag.len()..].chars().next(), Some('`' | ' ')))
            })
        })
        .map(|long| format!("--{long}"))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/usage.md's table of flags has no row for {missing:?}"
    );
}

/// The README reads in ten minutes and the performance page says where each figure stands,
/// not how it got there: each keeps to its length.
#[test]
fn the_readme_and_the_performance_page_keep_their_length() {
    for (path, most) in [("README.md", 250), ("docs/performance.md", 300)] {
        let lines = read(path).lines().count();
        assert!(lines <= most, "{path} has {lines} lines, more than {most}");
    }
}

/// The anchors of a markdown page's headings, as GitHub makes them: lower case, letters,
/// digits, `-` and `_` kept, spaces made `-`, the rest dropped; a repeated one gets `-1`,
/// `-2`... Lines inside code blocks are not headings.
fn anchors(text: &str) -> std::collections::HashSet<String> {
    let mut seen = std::collections::HashSet::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        let Some(title) = line.strip_prefix('#') else {
            continue;
        };
        if in_code {
            continue;
        }
        let title = title.trim_start_matches('#').trim();
        let slug: String = title
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                '-' | '_' => Some(c),
                c if c.is_alphanumeric() => Some(c.to_lowercase().next().unwrap_or(c)),
                _ => None,
            })
            .collect();
        let mut anchor = slug.clone();
        let mut n = 0;
        while !seen.insert(anchor.clone()) {
            n += 1;
            anchor = format!("{slug}-{n}");
        }
    }
    seen
}

/// Every relative link of the manual, the docs and the dated investigations of docs/lab/ leads
/// to a file that exists, and a link to a heading of a markdown page to a heading it has.
#[test]
fn relative_links_resolve() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![
        "README.md".to_string(),
        "CONTRIBUTING.md".to_string(),
        "results.md".to_string(),
    ];
    for dir in ["docs", "docs/lab"] {
        let mut names: Vec<String> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".md"))
            .collect();
        names.sort();
        pages.extend(names.into_iter().map(|name| format!("{dir}/{name}")));
    }
    assert!(
        pages.iter().filter(|p| p.starts_with("docs/lab/")).count() > 10,
        "{pages:?}"
    );
    let mut broken = Vec::new();
    for page in &pages {
        let text = read(page);
        let dir = root.join(page).parent().unwrap().to_path_buf();
        for (i, _) in text.match_indices("](") {
            let rest = &text[i + 2..];
            let Some(end) = rest.find(')') else { continue };
            let (target, anchor) = match rest[..end].split_once('#') {
                Some((target, anchor)) => (target, Some(anchor)),
                None => (&rest[..end], None),
            };
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let file = if target.is_empty() {
                root.join(page)
            } else {
                dir.join(target)
            };
            if !file.exists() {
                broken.push(format!("{page}: {target}"));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if target.is_empty() || target.ends_with(".md") {
                let headings = anchors(&std::fs::read_to_string(&file).unwrap());
                if !headings.contains(anchor) {
                    broken.push(format!("{page}: {target}#{anchor}"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing: {broken:?}");
}

/// The Kubernetes manifests of docs/distributed.md parse as YAML, and their Jobs are what
/// the page says: the clients an Indexed Job that never retries, whose share count agrees
/// with its completions, results and merge on the same volume. No cluster runs here.
#[test]
fn the_kubernetes_manifests_parse_and_agree() {
    use serde_yaml_ng::Value;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes");
    let mut docs: Vec<Value> = Vec::new();
    for name in ["clients.yaml", "merge.yaml"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        for doc in serde_yaml_ng::Deserializer::from_str(&text) {
            let value = Value::deserialize(doc).unwrap_or_else(|e| panic!("{name}: {e}"));
            for key in ["apiVersion", "kind", "metadata"] {
                assert!(value.get(key).is_some(), "{name}: no {key}");
            }
            docs.push(value);
        }
    }
    let named = |kind: &str, name: &str| {
        docs.iter()
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
            .clone()
    };
    let claim = named("PersistentVolumeClaim", "dbcompare-results");
    assert_eq!(claim["spec"]["accessModes"][0], "ReadWriteMany");
    let clients = named("Job", "dbcompare-clients");
    let spec = &clients["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["backoffLimit"], 0);
    assert_eq!(spec["completions"], spec["parallelism"]);
    let n = spec["completions"].as_u64().unwrap();
    let script = spec["template"]["spec"]["containers"][0]["args"][0]
        .as_str()
        .unwrap();
    assert!(script.contains("JOB_COMPLETION_INDEX + 1"), "{script}");
    assert!(script.contains(&format!("--client \"$k/{n}\"")), "{script}");
    assert!(
        script.contains("--start-at") && script.contains("/results/client-$k"),
        "{script}"
    );
    let merge = named("Job", "dbcompare-merge");
    let script = merge["spec"]["template"]["spec"]["containers"][0]["args"][0]
        .as_str()
        .unwrap();
    assert!(
        script.contains("dbcompare merge /results/client-*/run.json"),
        "{script}"
    );
    for job in [&clients, &merge] {
        let volumes = &job["spec"]["template"]["spec"]["volumes"][0];
        assert_eq!(
            volumes["persistentVolumeClaim"]["claimName"],
            "dbcompare-results"
        );
    }
}
