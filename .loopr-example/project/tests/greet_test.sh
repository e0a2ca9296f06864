# The greeting and its options.
. tests/lib.sh

expect "Hello, world!" 0
expect "Hello, Ada!" 0 Ada
expect "" 2 --bogus

exit $status
