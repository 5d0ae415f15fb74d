/* libdep.so: lives in sub/ next to libouter.so and is found only through
 * libouter.so's RUNPATH $ORIGIN/sub. */
int dep_value(void) { return 42; }
