# Sourced by the sweep scripts: the default compliances (m/N) and the table's header.
# shellcheck disable=SC2034
SWEEP_VALUES="0 1e-4 3e-4 1e-3 3e-3 1e-2 3e-2 1e-1 2e-1 3e-1 5e-1 1"
SWEEP_HEADER="compliance,n,frames,substeps,final_mean_strain,final_max_strain,elastic_energy,total_energy,wall_s,state_sha256"
