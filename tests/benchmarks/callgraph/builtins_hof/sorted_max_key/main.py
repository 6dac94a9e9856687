def by_priority(job):
    return job["priority"]


def by_age(job):
    return job["age"]


def plan(jobs):
    ordered = sorted(jobs, key=by_priority, reverse=True)
    oldest = max(jobs, key=by_age)
    return [j["name"] for j in ordered], oldest["name"]


def main():
    jobs = [{"name": "a", "priority": 1, "age": 5}, {"name": "b", "priority": 3, "age": 2}]
    print(plan(jobs))


main()
