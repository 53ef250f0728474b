#!/bin/sh
# A small git repository with a stack of three changes to a C program, for `perflab stack`:
#   1. faster:  the checksum loop reads every other byte
#   2. slower:  a second pass validates the buffer
#   3. neutral: a comment and a README
# Usage: examples/stack/make_repo.sh DIR   (DIR must not exist)
set -eu
dir=$1
mkdir "$dir"
cd "$dir"
git init -q -b main
git config user.name example
git config user.email example@example.com
cat > Makefile <<'MAKE'
prog: prog.c
	cc -O1 -o prog prog.c
MAKE
cat > prog.c <<'C'
#include <stdio.h>
#include <string.h>
#define N 4000000
#define STRIDE 1
static unsigned char buffer[N];
static unsigned checksum(const unsigned char *p, int n) {
    unsigned s = 0;
    for (int i = 0; i < n; i += STRIDE) s = s * 31 + p[i];
    return s;
}

#define PASSES 1
int main(void) {
    memset(buffer, 7, sizeof buffer);
    unsigned s = 0;
    for (int pass = 0; pass < PASSES; pass++) s += checksum(buffer, N);
    printf("%u\n", s);
    return 0;
}
C
printf 'prog\n' > .gitignore
git add -A
git commit -q -m "checksum a buffer"
git tag base
sed -i 's/#define STRIDE 1/#define STRIDE 2/' prog.c
git commit -q -am "faster: read every other byte"
sed -i 's/#define PASSES 1/#define PASSES 2/' prog.c
git commit -q -am "slower: a second pass validates the buffer"
sed -i 's|^static unsigned char buffer|/* the data to check */\nstatic unsigned char buffer|' prog.c
echo "A checksum benchmark." > README
git add -A
git commit -q -m "neutral: a comment and a README"
git log --oneline
