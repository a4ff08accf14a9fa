//! Reading plan files: defaults, round trip and clear errors.

use trainplan_core::plan::{PLAN_FILE_VERSION, Plan, PlanFileError};
use trainplan_core::{catalog, evaluate};

#[track_caller]
fn check_err(text: &str, expected: &PlanFileError) {
    match Plan::from_json(text) {
        Ok(plan) => panic!("{text} was accepted as {plan:?}"),
        Err(err) => assert_eq!(&err, expected, "{text}"),
    }
}

#[test]
fn a_minimal_plan_names_only_the_model() {
    let plan = Plan::from_json(r#"{"model": "llama-3-8b"}"#).unwrap();
    assert_eq!(plan.model.id, "llama-3-8b");
    assert_eq!(plan.cluster.n_devices(), 8);
}

#[test]
fn plan_file_round_trips_for_every_model_and_a_grid_of_clusters() {
    for entry in catalog::models() {
        for nodes in [1_u32, 2, 7, 128] {
            for devices_per_node in [1_u32, 8, 16] {
                let text = format!(
                    r#"{{"version": 1, "model": "{}", "cluster": {{"nodes": {nodes}, "devices_per_node": {devices_per_node}}}}}"#,
                    entry.id
                );
                let plan = Plan::from_json(&text).unwrap();
                let again = serde_json::to_string(&plan.to_file()).unwrap();
                assert_eq!(Plan::from_json(&again).unwrap(), plan);
                assert_eq!(plan.cluster.n_devices(), u64::from(nodes * devices_per_node));
            }
        }
    }
}

#[test]
fn bad_plans_are_refused_with_a_reason() {
    check_err(r#"{"model": "gpt-5"}"#, &PlanFileError::UnknownModel("gpt-5".to_owned()));
    check_err(r#"{"model": "llama-2-7b", "cluster": {"nodes": 0}}"#, &PlanFileError::Zero("cluster.nodes"));
    check_err(
        r#"{"model": "llama-2-7b", "cluster": {"devices_per_node": 0}}"#,
        &PlanFileError::Zero("cluster.devices_per_node"),
    );
    check_err(
        &format!(r#"{{"version": {}, "model": "llama-2-7b"}}"#, PLAN_FILE_VERSION + 1),
        &PlanFileError::UnsupportedVersion(PLAN_FILE_VERSION + 1),
    );
    for text in [
        "",
        "[]",
        "{}",
        r#"{"model": 7}"#,
        r#"{"model": "llama-2-7b", "cluster": {"nodes": -1}}"#,
        r#"{"model": "llama-2-7b", "cluster": {"nodes": 1.5}}"#,
        r#"{"model": "llama-2-7b", "cluster": {"nodes": 99999999999}}"#,
        r#"{"model": "llama-2-7b", "colour": "blue"}"#,
    ] {
        match Plan::from_json(text) {
            Err(PlanFileError::Json(msg)) => assert!(!msg.is_empty()),
            other => panic!("{text:?} gave {other:?}"),
        }
    }
}

#[test]
fn the_largest_cluster_still_evaluates() {
    let text = format!(
        r#"{{"model": "llama-2-13b", "cluster": {{"nodes": {max}, "devices_per_node": {max}}}}}"#,
        max = u32::MAX
    );
    let report = evaluate(&Plan::from_json(&text).unwrap());
    assert_eq!(report.n_devices, u64::from(u32::MAX) * u64::from(u32::MAX));
    // Far more devices than elements in any tensor: each holds one padded element of each tensor.
    assert!(0 < report.memory.zero3_bf16_weight_bytes_per_device);
}
