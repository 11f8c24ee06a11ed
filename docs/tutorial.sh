#!/usr/bin/env bash
# The tutorial's commands (docs/tutorial.md), in order: run from an empty directory beside the
# repository's ../shared/data, or set D to Moses's test_scorer_data elsewhere.
set -euo pipefail
D=${D:-../shared/data/moses-mert-nbest/test_scorer_data}
BLEU="--lowercase --tokenize none"

smtlib kbest stats "$D/nbest.out.gz" --refs "$D/reference.txt.gz" $BLEU

seq 0 49 > tune.ids
seq 50 99 > test.ids
gzip -dc "$D/reference.txt.gz" | sed -n 1,100p > ref100.en
smtlib kbest slice --ids tune.ids --kbest "$D/nbest.out.gz" tune.nbest.gz --lines ref100.en tune.ref.en
smtlib kbest slice --ids test.ids --kbest "$D/nbest.out.gz" test.nbest.gz --lines ref100.en test.ref.en

printf '%s 1\n' d_0 d_1 d_2 d_3 d_4 d_5 d_6 lm_0 lm_1 tm_0 tm_1 tm_2 tm_3 tm_4 > init.weights
echo "w_0 0" >> init.weights

for method in mert kbmira pro; do
  for seed in 1 2 3; do
    smtlib tune $method --kbest tune.nbest.gz --refs tune.ref.en $BLEU \
        --init init.weights --out $method.s$seed.weights --seed $seed --quiet
    smtlib rerank --kbest test.nbest.gz --weights $method.s$seed.weights --refs test.ref.en $BLEU \
        > $method.s$seed.test.1best
  done
done
smtlib rerank --kbest test.nbest.gz --weights init.weights --refs test.ref.en $BLEU > init.test.1best

smtlib compare --refs test.ref.en $BLEU \
    --baseline mert.s1.test.1best mert.s2.test.1best mert.s3.test.1best \
    --system "kbmira=kbmira.s1.test.1best,kbmira.s2.test.1best,kbmira.s3.test.1best" \
    --system "pro=pro.s1.test.1best,pro.s2.test.1best,pro.s3.test.1best" \
    --tsv compare.tsv
