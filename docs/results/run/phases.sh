#!/usr/bin/env bash
# The table run's driver: one `snakemake` call per line of a phases file (its targets), every job on
# one thread, each call after an unlock and with --rerun-incomplete, so that it resumes where a stop
# left it. Kept in the repository because the run's own directory can be lost with its machine
# (docs/results/README.md).
#
#   docs/results/run/phases.sh RUN_DIR CORES PHASES_FILE
#
# RUN_DIR is the run's clone (e.g. results/table-run), with its environment beside it (RUN_DIR-venv)
# and the shared data reachable as ../shared/data from inside it; the log is RUN_DIR.log. Each start
# appends its time, the clone's commit and whether its tree was clean to RUN_DIR/results/run_commits.tsv,
# so that a run resumed at a later commit names which commit wrote what (smtlib report publish-simianer).
# Start it in the background: (setsid nohup docs/results/run/phases.sh results/table-run 2 \
#   docs/results/run/phases.txt > /dev/null 2>&1 &); stop it with SIGTERM to its process group.
#
# A line "free PATH..." (paths relative to RUN_DIR, shell globs allowed) deletes intermediate files
# whose every consumer is in the phases above it (a run's fold systems and templated models take tens
# of GB): they are first moved aside, and deleted only if Snakemake then plans nothing for any target
# above the line; otherwise they are moved back and the driver stops. Each deletion is appended to
# RUN_DIR/results/run_freed.tsv (time, kB freed, paths; a file linked from a path that stays frees nothing).
# A line "config ITEM..." adds Snakemake --config items (KEY=VALUE, no spaces: e.g. a JSON mapping
# 'simianer={"restore_runs":"docs/results/simianer_table2/runs"}') to every later snakemake call,
# the dry runs of "free" lines included.
set -u
run_dir=$(cd "$1" && pwd); cores=$2; phases=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
log="$run_dir.log"
export PATH="$run_dir-venv/bin:$PATH"
threads="decode_first=1 decode_dev=1 decode_dev_lattice=1 decode_test=1 tune_lattice=1"
cd "$run_dir"
mkdir -p results
state=clean; [ -z "$(git status --porcelain --untracked-files=no)" ] || state=modified
printf '%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$(git rev-parse HEAD)" "$state" >> results/run_commits.tsv
# files a stopped driver had moved aside for a "free" line go back first (that line runs again)
for aside in results/.freed-*; do
    [ -d "$aside" ] || continue
    cp -al "$aside"/. . && rm -rf "$aside"
    echo "=== $(date -u +%FT%TZ) put back what a stopped driver had moved aside ($aside)" >> "$log"
done
done_targets=""
config_items="data_dir=../shared/data"
free_paths() {
    local aside="results/.freed-$$" kb paths="$*"
    if [ -z "$done_targets" ]; then
        echo "=== $(date -u +%FT%TZ) free refused: no phase above it" >> "$log"
        return 1
    fi
    rm -rf "$aside"
    for p in $paths; do
        [ -e "$p" ] || continue
        mkdir -p "$aside/$(dirname "$p")" && mv "$p" "$aside/$p"
    done
    [ -d "$aside" ] || { echo "=== $(date -u +%FT%TZ) free: nothing left of $paths" >> "$log"; return 0; }
    if snakemake -n --config $config_items -- $done_targets 2>&1 | tail -1 | grep -q "^Nothing to be done"; then
        # what the deletion frees: a file counts once, and only if all its hard links are among the files
        # deleted (a templated model links its fold's tables, which may stay)
        kb=$(find "$aside" -type f -printf '%i %n %k\n' | awk '{c[$1]++; n[$1]=$2; k[$1]=$3}
            END {for (i in c) if (c[i] == n[i]) s += k[i]; print s + 0}')
        rm -rf "$aside"
        printf '%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$kb" "$paths" >> results/run_freed.tsv
        echo "=== $(date -u +%FT%TZ) freed $kb kB: $paths" >> "$log"
    else
        cp -al "$aside"/. . && rm -rf "$aside"  # every file back in place (hard links, same disk)
        echo "=== $(date -u +%FT%TZ) free refused: Snakemake would rebuild some of $paths for a finished phase" >> "$log"
        return 1
    fi
}
while read -r targets; do
    case "$targets" in ""|"#"*) continue ;; esac
    if [ "${targets%% *}" = free ]; then
        free_paths ${targets#free } || exit 1
        continue
    fi
    if [ "${targets%% *}" = config ]; then
        config_items="$config_items ${targets#config }"
        echo "=== $(date -u +%FT%TZ) config: ${targets#config }" >> "$log"
        continue
    fi
    echo "=== $(date -u +%FT%TZ) phase: $(echo $targets | wc -w) targets" >> "$log"
    snakemake --unlock --config $config_items -- $targets >> "$log" 2>&1
    if ! snakemake --cores "$cores" --set-threads $threads --rerun-incomplete --config $config_items \
            -- $targets >> "$log" 2>&1; then
        echo "=== $(date -u +%FT%TZ) phase failed" >> "$log"
        exit 1
    fi
    done_targets="$done_targets $targets"
done < "$phases"
echo "=== $(date -u +%FT%TZ) all phases done" >> "$log"
