#!/bin/sh
# A small git repository with merged pull requests, for `perflab stack`, `bisect`, `history`
# and `check`. main's first-parent line after the tag `good`:
#   docs: a README                     neutral
#   Merge pull request #1 from a/tidy  neutral merge (comments only)
#   tidy: a comment                    neutral
#   break the build                    the build fails here only
#   fix the build                      neutral
#   Merge pull request #2 from b/slow  the culprit: a second loop (about 1.9x the instructions)
#   docs: more README                  neutral
#   tidy: another comment              neutral
# and two branches off main, not merged: pr/slower (more work), pr/docs (a README).
# Build: make (fails while the file `broken` exists). Usage: examples/history/make_repo.sh DIR
set -eu
dir=$1
mkdir "$dir"
cd "$dir"
git init -q -b main
git config user.name example
git config user.email example@example.com
cat > prog.c <<'C'
#include <stdio.h>
#include "work.h"
int main(void) {
    volatile unsigned s = 0;
    for (int i = 0; i < N; i++) s += (unsigned)i * 7u;
    for (int i = 0; i < EXTRA; i++) s ^= (unsigned)i;
    printf("%u\n", s);
    return 0;
}
C
printf '#define N 200000\n#define EXTRA 0\n' > work.h
printf 'prog: prog.c work.h\n\ttest ! -e broken\n\tcc -O1 -o prog prog.c\n' > Makefile
printf 'prog\n' > .gitignore
git add -A && git commit -q -m "a program" && git tag good
echo "a program" > README && git add -A && git commit -q -m "docs: a README"
git checkout -q -b a/tidy
sed -i '1i /* the work */' prog.c && git commit -q -am "a comment"
sed -i '1a /* more */' prog.c && git commit -q -am "another comment"
git checkout -q main && git merge -q --no-ff -m "Merge pull request #1 from a/tidy" a/tidy
sed -i '1i /* sizes */' work.h && git commit -q -am "tidy: a comment"
echo yes > broken && git add -A && git commit -q -m "break the build"
git rm -q broken && git commit -q -m "fix the build"
git checkout -q -b b/slow
sed -i 's/EXTRA 0/EXTRA 200000/' work.h && git commit -q -am "a second loop"
echo "the second loop" > NOTES && git add -A && git commit -q -m "docs: the second loop"
git checkout -q main && git merge -q --no-ff -m "Merge pull request #2 from b/slow" b/slow
echo "a program, documented" > README && git commit -q -am "docs: more README"
sed -i '2a /* x */' prog.c && git commit -q -am "tidy: another comment"
git checkout -q -b pr/slower
sed -i 's/EXTRA 200000/EXTRA 400000/' work.h && git commit -q -am "more work"
git checkout -q -b pr/docs main
echo "a program, documented at length" > README && git commit -q -am "docs: say more"
git checkout -q main
git log --oneline --first-parent good~0..main
