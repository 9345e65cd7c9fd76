defineTool("word_count");
