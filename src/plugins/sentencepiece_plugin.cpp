// placeholder replaced by the text layer
