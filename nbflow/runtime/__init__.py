"""Running graphs: plans (prune, place, order, bind), executors, and Session."""
