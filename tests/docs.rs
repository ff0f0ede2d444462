//! The manual speaks of every store the catalog knows: the README's stores table and the
//! suites page have a row for each; every flag is documented, every link resolves, and the
//! Kubernetes manifests parse.

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
fn every_store_has_its_row_in_the_readme_and_the_suites_page() {
    for (path, text) in [
        ("README.md", read("README.md")),
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

/// Every flag of `dbcompare run` is in the README's table of flags.
#[test]
fn every_run_flag_is_in_the_readme() {
    use clap::CommandFactory;
    let readme = read("README.md");
    let cli = dbcompare::cli::Cli::command();
    let run = cli.find_subcommand("run").expect("a run subcommand");
    let missing: Vec<String> = run
        .get_arguments()
        .filter_map(|a| a.get_long())
        .filter(|long| !readme.contains(&format!("`--{long}")))
        .map(|long| format!("--{long}"))
        .collect();
    assert!(
        missing.is_empty(),
        "README.md does not document {missing:?}"
    );
}

/// Every relative link of the manual and the docs leads to a file that exists.
#[test]
fn relative_links_resolve() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![
        "README.md".to_string(),
        "CONTRIBUTING.md".to_string(),
        "results.md".to_string(),
    ];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md") {
            pages.push(format!("docs/{name}"));
        }
    }
    let mut broken = Vec::new();
    for page in &pages {
        let text = read(page);
        let dir = root.join(page).parent().unwrap().to_path_buf();
        for (i, _) in text.match_indices("](") {
            let rest = &text[i + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = rest[..end].split('#').next().unwrap_or_default();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            if !dir.join(target).exists() {
                broken.push(format!("{page}: {target}"));
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
