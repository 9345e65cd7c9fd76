// A file that forgets to define its tool.
const answer = 42;
